/** Encodes one path segment (an id from a job file) so it cannot change the path's shape. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}
