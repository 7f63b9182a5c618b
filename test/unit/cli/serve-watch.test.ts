// The configuration watcher of `toolhost serve`: a burst of changes is one
// reload; a folder that is removed and recreated, or a file saved by rename, is
// still watched; the host's own writes (state folder, log file) are ignored; a
// path that cannot be watched is logged, never thrown.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchConfig, type ConfigWatch } from '../../../src/cli/serve-watch.js';
import { redactingLogger } from '../../../src/log.js';
import { recordingLogger, type RecordingLogger } from '../../helpers/recording-logger.js';
import { until } from '../../helpers/wait.js';

const DEBOUNCE_MS = 50;
/** Lines a logger writes before a test's loop guard stops it. */
const LOOP_BOUND = 100;

describe('watchConfig', () => {
  let root: string;
  let changes: number;
  let watch: ConfigWatch | undefined;
  let log: RecordingLogger;

  const start = (options: { manifestDirs?: string[]; policyFiles?: string[]; ignore?: string[] } = {}): void => {
    watch = watchConfig({
      manifestDirs: options.manifestDirs ?? [join(root, 'manifests')],
      policyFiles: options.policyFiles ?? [join(root, 'org.yaml')],
      workspace: join(root, 'ws'),
      ignore: options.ignore ?? [],
      debounceMs: DEBOUNCE_MS,
      onChange: () => void changes++,
      logger: log.logger,
    });
  };
  /** Makes a change and waits for the reload it triggers (bounded). */
  const expectReload = async (change: () => void): Promise<void> => {
    const before = changes;
    change();
    await until(() => changes !== before, 'a reload', 5_000);
  };
  /** The paths the watcher has logged as ignored so far. */
  const ignoredPaths = (): Set<unknown> =>
    new Set(
      log
        .lines()
        .filter((line) => String(line['msg']).endsWith(', ignored'))
        .map((line) => line['path']),
    );

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'toolhost-watch-')));
    mkdirSync(join(root, 'manifests/sub'), { recursive: true });
    mkdirSync(join(root, 'ws'));
    writeFileSync(join(root, 'org.yaml'), 'kind: Policy\n');
    changes = 0;
    log = recordingLogger('debug');
  });
  afterEach(() => {
    watch?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('reloads once for a burst of writes, in nested folders too', async () => {
    start();
    await expectReload(() => {
      for (let index = 0; index < 20; index++) writeFileSync(join(root, 'manifests/sub', `t${index}.yaml`), 'x');
    });
    // Whatever the burst's spread, it is far fewer reloads than writes.
    expect(changes).toBeLessThan(5);
  });

  it('watches subfolders created after the start, and their own subfolders, and forgets removed ones', async () => {
    start();
    await expectReload(() => mkdirSync(join(root, 'manifests/later/deeper'), { recursive: true }));
    await expectReload(() => writeFileSync(join(root, 'manifests/later/deeper/tool.yaml'), 'x'));
    await expectReload(() => writeFileSync(join(root, 'manifests/sub/tool.yaml'), 'x'));
    await expectReload(() => rmSync(join(root, 'manifests/later'), { recursive: true }));
    await expectReload(() => writeFileSync(join(root, 'manifests/sub/tool.yaml'), 'y'));
  });

  it('follows a manifest folder that is removed and created again', async () => {
    start();
    await expectReload(() => rmSync(join(root, 'manifests'), { recursive: true }));
    await expectReload(() => mkdirSync(join(root, 'manifests')));
    await expectReload(() => writeFileSync(join(root, 'manifests/new.yaml'), 'x'));
  });

  it('follows a policy file saved by rename, and the workspace policies/ folder', async () => {
    start();
    await expectReload(() => {
      writeFileSync(join(root, 'org.yaml.tmp'), 'kind: Policy\nname: new\n');
      renameSync(join(root, 'org.yaml.tmp'), join(root, 'org.yaml'));
    });
    await expectReload(() => writeFileSync(join(root, 'org.yaml'), 'kind: Policy\nname: again\n'));
    await expectReload(() => mkdirSync(join(root, 'ws/policies')));
    await expectReload(() => writeFileSync(join(root, 'ws/policies/repo.yaml'), 'kind: Policy\n'));
  });

  it('ignores the host writing its own state inside a watched folder, and unrelated files beside a policy', async () => {
    mkdirSync(join(root, 'manifests/.toolhost'));
    start({ ignore: [join(root, 'manifests/.toolhost')] });
    const written = [...Array.from({ length: 5 }, (_, index) => join(root, 'manifests/.toolhost', `journal-${index}`)), join(root, 'unrelated.txt')];
    for (const path of written) writeFileSync(path, 'x');
    // The watcher says so when it sets a change aside (the moment it would otherwise arm a reload):
    // once it has said so for every write, none of them can reload.
    await until(() => written.every((path) => ignoredPaths().has(path)), 'every write to be ignored', 5_000);
    expect(changes).toBe(0);
    // A real change afterwards is seen, and is the only reload.
    await expectReload(() => writeFileSync(join(root, 'manifests/tool.yaml'), 'x'));
    expect(changes).toBe(1);
  });

  it('says nothing of the host writing its own log file beside a policy, so a debug log there does not feed itself', async () => {
    const logFile = join(root, 'host.log');
    start({ ignore: [logFile] });
    for (let index = 0; index < 5; index++) writeFileSync(logFile, `line ${index}\n`, { flag: 'a' });
    // Events come in order: once a later write beside the policy is logged, the log file's were seen.
    const after = join(root, 'unrelated.txt');
    writeFileSync(after, 'x');
    await until(() => ignoredPaths().has(after), 'the later write to be ignored', 5_000);
    expect(ignoredPaths().has(logFile)).toBe(false);
    expect(changes).toBe(0);
  });

  it('keeps a debug log written beside a watched policy to what happened (no line about its own lines)', async () => {
    const logFile = join(root, 'host.log');
    // The host's logger, writing each line to the file as it comes; past a bound it stops
    // writing, so a loop (each line a change beside the policy, logged again) ends and shows.
    let written = 0;
    const fileLogger = redactingLogger('debug', {
      write: (line: string) => {
        written += 1;
        if (written <= LOOP_BOUND) appendFileSync(logFile, line);
      },
    });
    watch = watchConfig({
      manifestDirs: [join(root, 'manifests')],
      policyFiles: [join(root, 'org.yaml')],
      workspace: join(root, 'ws'),
      ignore: [logFile],
      debounceMs: DEBOUNCE_MS,
      onChange: () => void changes++,
      logger: fileLogger,
    });
    fileLogger.info('the host starts');
    const after = join(root, 'unrelated.txt');
    writeFileSync(after, 'x');
    await until(() => readFileSync(logFile, 'utf8').includes(after) || written > LOOP_BOUND, 'the write beside the policy to be logged', 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toBeLessThan(LOOP_BOUND);
    const paths = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { path?: string }).path);
    expect(new Set(paths)).toEqual(new Set([undefined, after]));
  });

  it('a path whose folder does not exist is logged, not thrown, and the rest is still watched', async () => {
    start({ manifestDirs: [join(root, 'missing/deeper/manifests'), join(root, 'manifests')] });
    await expectReload(() => writeFileSync(join(root, 'manifests/tool.yaml'), 'x'));
  });
});
