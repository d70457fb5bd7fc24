import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';

export type Placement = 'first' | 'last' | { before: string } | { after: string };

/** `order` with `rowId` moved to its new place; unknown rows are refused naming the existing ones. */
export function moveRow(order: readonly string[], rowId: string, place: Placement): string[] {
  const known = (id: string) => {
    if (!order.includes(id))
      throw new UserError(
        'GEX_ROW_NOT_FOUND',
        `No row ${displayId(id)} in this configuration; its rows are ${order.map(displayId).join(', ') || 'none'}`,
      );
  };
  known(rowId);
  const rest = order.filter((id) => id !== rowId);
  if (place === 'first') return [rowId, ...rest];
  if (place === 'last') return [...rest, rowId];
  const anchor = 'before' in place ? place.before : place.after;
  known(anchor);
  if (anchor === rowId)
    throw new UserError(
      'GEX_CLI_USAGE',
      `A row cannot move ${'before' in place ? 'before' : 'after'} itself (${displayId(rowId)})`,
    );
  const at = rest.indexOf(anchor) + ('after' in place ? 1 : 0);
  return [...rest.slice(0, at), rowId, ...rest.slice(at)];
}
