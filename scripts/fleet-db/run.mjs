// `npm run fleet-db`: a throwaway PostgreSQL for a person trying the fleet
// journal (the same cluster the tests start). Prints the --journal URL and
// the commands to try, and removes everything on Ctrl-C.
import { startCluster } from './cluster.mjs';

// Listen first: a Ctrl-C while the cluster starts still removes it.
let stopping = false;
let cluster;
const stop = () => {
  stopping = true;
  if (cluster === undefined) return;
  cluster.stop();
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);
cluster = await startCluster();
if (stopping) stop();
cluster.psql('CREATE DATABASE toolhost');
const url = `postgres://${cluster.superuser}@${encodeURIComponent(cluster.socketDir)}:${cluster.port}/toolhost`;
const tcpUrl = `postgres://${cluster.passwordUser}@127.0.0.1:${cluster.port}/toolhost`;
cluster.psql(`GRANT ALL ON DATABASE toolhost TO ${cluster.passwordUser}; ALTER DATABASE toolhost OWNER TO ${cluster.passwordUser}`);
process.stdout.write(`A throwaway PostgreSQL ${cluster.psql('SHOW server_version').trim()} is running in ${cluster.root}.

Over its Unix socket (no password):
  export TOOLHOST_JOURNAL='${url}'
Over TCP with a password (the password goes in PGPASSWORD, never in the URL):
  export PGPASSWORD='${cluster.password}'
  export TOOLHOST_JOURNAL='${tcpUrl}'

Then, in as many terminals as you like (each one a host of the fleet):
  npx toolhost serve --state .toolhost-$RANDOM        # or any MCP client spawning it
  npx toolhost audit                                  # every host's calls
  npx toolhost approvals; npx toolhost approve ID     # operator approvals
  TOOLHOST_JOURNAL_LEASE_MS=3000 ...                  # a short lease, to watch a killed host's calls turn interrupted

Ctrl-C stops the database and removes it.
`);
setInterval(() => {}, 60_000);
