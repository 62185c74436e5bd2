// The only hand-written C in proofkit: helpers for what Swift cannot express directly.
// Every symbol is prefixed proofkit_<lib>_ and says why it exists.
#ifndef PROOFKIT_SHIMS_H
#define PROOFKIT_SHIMS_H
#endif
