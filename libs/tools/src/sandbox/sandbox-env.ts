/** The PATH inside the sandbox: the worker's own PATH may name directories the sandbox does not show. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Locale and time zone: the only variables taken from the worker without being granted by name. */
const LOCALE_ENV = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ)$/;

/**
 * The environment a tool command gets, built from an allow-list: locale and time zone, the names an
 * operator granted (HERALD_SANDBOX_ENV; the platform's own settings are refused at config load),
 * and fixed values. Database URLs, tokens and keys the worker holds never reach a command.
 */
export function sandboxEnv(worker: Readonly<Record<string, string | undefined>>, granted: readonly string[], workspace: string, path = SANDBOX_PATH): Record<string, string> {
  const env: Record<string, string> = { PATH: path, LANG: 'C.UTF-8' };
  for (const [name, value] of Object.entries(worker)) {
    if (value !== undefined && (LOCALE_ENV.test(name) || granted.includes(name))) env[name] = value;
  }
  return { ...env, HOME: workspace, PWD: workspace, TMPDIR: '/tmp', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' };
}
