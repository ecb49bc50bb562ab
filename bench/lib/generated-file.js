/**
 * A generated input file written in 1 MB writes: to `<path>.tmp`, renamed to `path` when
 * complete, so that a cached file is always whole.
 */
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';

export function generatedFile(path) {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  let bytes = 0;
  let out = [];
  let outLength = 0;
  const flush = () => {
    bytes += writeSync(fd, out.join(''));
    out = [];
    outLength = 0;
  };
  return {
    push(text) {
      out.push(text);
      outLength += text.length;
      if (outLength > 1 << 20) flush();
    },
    /** Writes what is left, closes and renames the file; returns the bytes written. */
    finish() {
      flush();
      closeSync(fd);
      renameSync(tmp, path);
      return bytes;
    },
  };
}
