/**
 * A reader that goes away (`gex configs list | head -1`) makes writes to stdout or stderr fail
 * with EPIPE, and an unhandled stream error would crash the command. Here such a stream simply
 * stops being written to: the command carries on (a run still saves its tables and state) and ends
 * with its own exit code.
 */
export function ignoreClosedOutput(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
      silence(stream);
    });
  }
}

function silence(stream: NodeJS.WriteStream): void {
  // later writes are accepted and dropped; their callbacks still run so nothing waits forever
  stream.write = (...args: unknown[]) => {
    const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    if (callback) process.nextTick(callback);
    return true;
  };
}
