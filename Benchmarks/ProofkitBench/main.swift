import Proofkit

print("proofkit-bench: no benchmarks yet")
