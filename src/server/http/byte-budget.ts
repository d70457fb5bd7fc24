/**
 * Bytes that requests of one server may hold in memory together (data previews being built or
 * sent, file uploads' chunks): taken before they are held, given back when they are not; what
 * does not fit is refused (503, retry later) rather than grown without bound.
 */
export class ByteBudget {
  private used = 0;

  constructor(readonly total: number) {}

  tryTake(bytes: number): boolean {
    if (this.used + bytes > this.total) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get inUse(): number {
    return this.used;
  }
}
