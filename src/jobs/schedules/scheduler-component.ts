/**
 * The component whose configurations are schedules (Keboola's Scheduler). A module of its own: the
 * store registers the component on every start, and this name must not pull the cron parser in.
 */
export const SCHEDULER_COMPONENT_ID = 'keboola.scheduler';
