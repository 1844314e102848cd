export { CpuBackend, type CpuBackendOptions, type LoadProgress } from './cpu-backend.js';
