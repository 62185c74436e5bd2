// Placeholder: the ONNX Runtime C API declarations proofkit uses are written in issue 3.
#ifndef PROOFKIT_CONNXRUNTIME_H
#define PROOFKIT_CONNXRUNTIME_H
#endif
