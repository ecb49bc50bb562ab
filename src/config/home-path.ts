/**
 * A leading `~` in a path from a settings file, a job file or the environment: the user's home
 * folder, as a shell would expand it. Files and variables are not read by a shell
 * (systemd's EnvironmentFile, YAML), and `state: ~/adsync/state.sqlite` made a folder named `~`.
 * Only `~` and `~/...`; `~user` is left as it is.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function expandHome(path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (path !== '~' && !path.startsWith('~/')) return path;
  const home = env.HOME || homedir();
  return path === '~' ? home : join(home, path.slice(2));
}
