// The throwaway PostgreSQL of a test run (scripts/fleet-db/cluster.mjs) does
// not outlive the process that started it: a SIGKILLed starter (a killed
// vitest never runs its globalSetup teardown) leaves neither the server nor
// its folder behind, and a normal stop() leaves no watchdog either. A port
// that another process took between picking and binding is replaced.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster } from '../../../scripts/fleet-db/cluster.mjs';
import { findMarkedProcesses, isAlive, waitForNoMarkedProcesses } from '../../helpers/proc-scan.js';
import { postgresUnavailable } from '../../helpers/postgres.js';

const CLUSTER_MODULE = fileURLToPath(new URL('../../../scripts/fleet-db/cluster.mjs', import.meta.url));

// Starts a cluster, prints its folder, then stops it on "stop" or waits to be killed.
const STARTER = `
import { startCluster } from ${JSON.stringify(CLUSTER_MODULE)};
const cluster = await startCluster();
process.stdout.write(JSON.stringify({ root: cluster.root }) + '\\n');
process.stdin.setEncoding('utf8').on('data', (text) => { if (text.includes('stop')) { cluster.stop(); process.stdout.write('stopped\\n'); } });
`;

interface Starter {
  readonly child: ReturnType<typeof spawn>;
  readonly root: string;
  readonly lines: string[];
}

const roots: string[] = [];
afterEach(async () => {
  // A failing test still leaves nothing running.
  for (const root of roots.splice(0)) await waitForNoMarkedProcesses(root, 1_000, { killSurvivors: true });
});

async function startStarter(): Promise<Starter> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', STARTER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let text = '';
  const root = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const parts = text.split('\n');
      text = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (line.startsWith('{')) resolve((JSON.parse(line) as { root: string }).root);
      }
    });
    child.once('exit', (code) => reject(new Error(`the starter exited (${String(code)}) before its cluster was up`)));
  });
  roots.push(root);
  return { child, root, lines };
}

function postmasterPid(root: string): number {
  return Number(readFileSync(join(root, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

describe.skipIf(postgresUnavailable !== undefined)('a throwaway PostgreSQL cluster', () => {
  it('stops and is removed when the process that started it is SIGKILLed', async () => {
    const starter = await startStarter();
    const server = postmasterPid(starter.root);
    expect(isAlive(server)).toBe(true);
    starter.child.kill('SIGKILL');
    // The server, its watchdog and every process naming the folder are gone, and so is the folder.
    expect(await waitForNoMarkedProcesses(starter.root, 30_000)).toEqual([]);
    expect(isAlive(server)).toBe(false);
    expect(existsSync(starter.root)).toBe(false);
  });

  it('leaves no watchdog behind when stopped normally', async () => {
    const starter = await startStarter();
    // The server (with its own processes) and the watchdog name the folder.
    expect(findMarkedProcesses(starter.root).length).toBeGreaterThan(1);
    starter.child.stdin?.write('stop\n');
    await new Promise<void>((resolve) => starter.child.stdout?.on('data', () => starter.lines.includes('stopped') && resolve()));
    expect(existsSync(starter.root)).toBe(false);
    expect(await waitForNoMarkedProcesses(starter.root, 30_000)).toEqual([]);
    starter.child.kill('SIGKILL');
  });

  it('starts on another port when the one it picked was taken before the server bound it', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = (taken.address() as { port: number }).port;
    try {
      const cluster = await startCluster({ port: takenPort });
      roots.push(cluster.root);
      try {
        expect(cluster.port).not.toBe(takenPort);
        expect(cluster.psql('SELECT 1').trim()).toBe('1');
      } finally {
        cluster.stop();
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
