// src/runner keeps no state in modules: whatever starts sandboxes goes through a
// ProcessServices (spawner, process groups, pids cgroups, machine facts,
// prepared sandboxes, isolate processes), which a host builds for itself. A test
// without a host builds its own here, at the top of its file (or describe): it
// is closed after the file's tests, so its spawner and cgroups go with them.
import { afterAll } from 'vitest';
import { ProcessServices, type ProcessServicesOptions } from '../../src/runner/index.js';

/** Fresh services for this file (or describe block), closed by afterAll. */
export function useProcessServices(options: ProcessServicesOptions = {}): ProcessServices {
  const services = new ProcessServices(options);
  afterAll(() => services.close());
  return services;
}
