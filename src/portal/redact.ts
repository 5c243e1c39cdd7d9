/**
 * Errors a policy raised are stored as the runner printed them, stack trace
 * included, and a stack trace names files on the runner's machine
 * (`/home/ada/work/policy.py`, `C:\Users\ada\...`, `file:///...`). The portal
 * shows every member of the client the error, so it shows each such path as
 * its file name only: the line numbers and function names stay, the
 * machine's directory layout (user names, project folders) does not.
 */

const FILE_URL = /\bfile:\/\/(?:localhost)?\/?(?:[^\s:()"'<>]*\/)?([^\s:()"'/<>]+)/g
const WINDOWS = /(?<![\w\\])[A-Za-z]:\\(?:[^\\\s:()"'<>|?*]+\\)*([^\\\s:()"'<>|?*]+)/g
/** An absolute or home-relative POSIX path of two segments or more, not part of a URL or a relative path. */
const POSIX = /(?<![\w.:/~-])~?(?:\/[^\s/:()"'<>[\]]+)+\/([^\s/:()"'<>[\]]+)/g
/**
 * Which POSIX-looking strings are files: a file name with an extension, or a
 * path under a directory machines keep users and work in. Others, such as
 * the array key `/joint_states/position`, are names, not paths.
 */
const FILE_NAME = /\.[A-Za-z][A-Za-z0-9]{0,7}$/
const LOCAL_ROOT = /^~?\/(home|Users|root|tmp|var|srv|opt|mnt|media|private|workspace|builds|usr|etc|run|data|work)\//

/**
 * The text with local file paths cut down to their file names.
 *
 * @example
 * redactLocalPaths('File "/home/ada/proj/policy.py", line 3, in act')
 * // 'File "policy.py", line 3, in act'
 */
export function redactLocalPaths(text: string): string {
  return text
    .replace(FILE_URL, '$1')
    .replace(WINDOWS, '$1')
    .replace(POSIX, (path: string, name: string) => (FILE_NAME.test(name) || LOCAL_ROOT.test(path) ? name : path))
}
