// Bench section: the cost of rules on arguments (SPEC section 4.1). A worker
// echo on hosts whose policy has 50 rules (path.within, url.host, string
// tests, sizes, the tool's class; none matches "hello", so every rule that
// applies is evaluated) against the same call on a host with no rules,
// measured in interleaved rounds; and the rules' evaluation alone, in this
// process, per call. Two policies of 50 rules: one where 10 name this tool and
// 40 name others (rules are written per tool), and the worst case where all 50
// name it. The target: under 5% of a worker call.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, round, summarize, timeCalls } from './lib.mjs';

const ECHO = { text: 'hello' };
const RULE_COUNT = 50;

/** The 50 rules, ten of each kind; `applying` of them name echo_worker, the rest other tools. */
export function benchRules(applying = RULE_COUNT) {
  const rules = [];
  for (let i = 0; i < RULE_COUNT / 5; i++) {
    rules.push(
      { name: `path-${i}`, when: `path.within(args.text, "protected-${i}/**", ".github/workflows-${i}/**")`, effect: 'deny' },
      { name: `url-${i}`, when: `args.text.startsWith("http") && url.host(args.text) == "evil-${i}.example"`, effect: 'deny' },
      { name: `word-${i}`, when: `args.text.contains("forbidden-${i}") || args.text.endsWith(".pem${i}")`, effect: 'ask' },
      { name: `size-${i}`, when: `size(args.text) > ${100_000 + i}`, effect: 'deny' },
      { name: `class-${i}`, when: `tool.class == "destructive" && args.text == "x${i}"`, effect: 'ask' },
    );
  }
  return rules.map((rule, index) => ({ ...rule, tool: index < applying ? 'echo_worker' : `other_tool_${index}` }));
}

function rulesYaml(rules) {
  return ['rules:', ...rules.flatMap((rule) => [`  - name: ${rule.name}`, `    tools: ["${rule.tool}"]`, `    when: '${rule.when}'`, `    effect: ${rule.effect}`])].join('\n');
}

/** Runs the section; `host(extra)` starts a toolhost like the other sections do. */
export async function benchRulesSection({ N, WARMUP, ROUNDS, scratch, host, log, policy, base }) {
  const { loadHostConfig } = await import('../../dist/src/host-config.js');
  const { evaluateRules } = await import('../../dist/src/policy/rules/evaluate-rules.js');
  const policies = {};
  const evaluation = {};
  for (const [key, applying] of [
    ['rules50of10', 10],
    ['rules50all', RULE_COUNT],
  ]) {
    const file = join(scratch, `policy-${key}.yaml`);
    writeFileSync(file, `${readFileSync(policy, 'utf8').trimEnd()}\n${rulesYaml(benchRules(applying))}\n`);
    policies[key] = file;
    // The evaluation alone: the same rules, compiled as the host compiles them, in this process.
    const config = loadHostConfig({ manifestDirs: [base.manifests], policyFiles: [file], workspace: base.workspace, cwd: ROOT, env: {} });
    if (config.problems.length > 0) throw new Error(`the rules policy does not load: ${JSON.stringify(config.problems)}`);
    const scope = config.tools.get('echo_worker')?.rules;
    if (scope?.rules.length !== applying) throw new Error(`expected ${applying} rules on echo_worker, got ${scope?.rules.length}`);
    evaluation[key] = evaluationUs(evaluateRules, scope, Math.max(2_000, N * 50));
  }

  // Through hosts: the same worker call with no rules and with each policy, in interleaved rounds.
  const targets = { none: await host(), rules50of10: await host({ policy: policies.rules50of10 }), rules50all: await host({ policy: policies.rules50all }) };
  try {
    for (const target of Object.values(targets)) await timeCalls(target.client, 'echo_worker', ECHO, 0, WARMUP);
    const keys = Object.keys(targets);
    const durations = Object.fromEntries(keys.map((key) => [key, []]));
    const ratios = { rules50of10: [], rules50all: [] };
    const perRound = Math.max(1, Math.ceil(N / ROUNDS));
    for (let r = 0; r < ROUNDS; r++) {
      const p50 = {};
      for (const key of keys.map((_, i) => keys[(i + r) % keys.length])) {
        const times = await timeCalls(targets[key].client, 'echo_worker', ECHO, perRound, 0);
        durations[key].push(...times);
        p50[key] = summarize(times).p50;
      }
      for (const key of Object.keys(ratios)) ratios[key].push(p50[key] / p50.none);
    }
    const none = summarize(durations.none);
    const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
    const result = { rules: RULE_COUNT, worker: { none }, target: 'rules add under 5% to a worker call' };
    log(`Rules on arguments: a policy of ${RULE_COUNT} rules on a worker echo (none matches "hello"; every rule naming the tool is evaluated)`);
    for (const [key, label] of [
      ['rules50of10', '10 of the 50 name this tool'],
      ['rules50all', 'all 50 name this tool (worst case)'],
    ]) {
      const share = evaluation[key] / 1000 / none.p50;
      result[key] = {
        evaluationUsPerCall: round(evaluation[key]),
        shareOfWorkerCall: round(share),
        host: summarize(durations[key]),
        p50Ratio: round(median(ratios[key])),
        met: share < 0.05,
      };
      log(
        `  ${label}: evaluation ${result[key].evaluationUsPerCall} µs per call = ${round(share * 100)}% of a worker call (p50 ${none.p50} ms): ${result[key].met ? 'met' : 'NOT met'}; through a host p50 ${result[key].host.p50} ms (median round ratio ${result[key].p50Ratio})`,
      );
    }
    log('');
    return result;
  } finally {
    await Promise.all(Object.values(targets).map((target) => target.close()));
  }
}

// Microseconds per call of the rules' evaluation: the best of a few runs (this machine is shared).
function evaluationUs(evaluateRules, scope, iterations) {
  let best = Infinity;
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    for (let i = 0; i < iterations / 5; i++) {
      const verdict = evaluateRules(scope, ECHO, null);
      if (verdict.effect !== 'allow') throw new Error(`a bench rule decided ${verdict.effect}: ${verdict.rule.ref}`);
    }
    best = Math.min(best, ((performance.now() - started) * 1000) / (iterations / 5));
  }
  return best;
}
