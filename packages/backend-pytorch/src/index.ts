export { pytorchBackend, createBackend } from './backend.js';
