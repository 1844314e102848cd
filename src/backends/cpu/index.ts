export { CpuBackend, type CpuBackendOptions } from './cpu-backend.js';
export type { LoadProgress } from '../backend.js';
