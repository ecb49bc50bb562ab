/**
 * The URL of a worker thread's module, `relative` to the calling module: next to it when adsync
 * runs from dist/, or its compiled twin in dist/ when the caller runs from src/ (the tests load
 * TypeScript sources, and a worker thread cannot).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export function workerModuleUrl(relative: string, callerUrl: string): URL {
  const here = new URL(relative, callerUrl);
  const path = fileURLToPath(here);
  if (existsSync(path)) return here;
  const at = path.lastIndexOf('/src/');
  return at < 0 ? here : pathToFileURL(`${path.slice(0, at)}/dist/${path.slice(at + 5)}`);
}
