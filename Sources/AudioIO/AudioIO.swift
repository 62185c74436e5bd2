public import ProofkitCore
