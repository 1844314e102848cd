export { OpenVinoBackend, compileProperties, cacheBlockSize, type OpenVinoBackendOptions, type InferencePrecision } from './openvino-backend.js';
export { isOpenVinoDevice, parseOpenVinoDevice, resolveOpenVinoDevice } from './device.js';
export { planStepInputs, isCacheInput, LOGITS_INDICES, REQUIRED_INPUTS, type PortInfo, type StepInput } from './step-inputs.js';
export { HOW_TO_GET_OPENVINO, loadOpenVinoBinding } from './native-binding.js';
