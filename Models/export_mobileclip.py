#!/usr/bin/env python3
"""Export MobileCLIP-S0's image encoder to ONNX and write its prompt-embeddings file.

For a user WITH internet and torch (this cannot run on the build machine, which has neither).

    # Apple's reference code and checkpoint (MobileCLIP-S0 is only published there):
    python -m venv mc && . mc/bin/activate
    pip install torch torchvision onnx onnxruntime pillow numpy
    pip install git+https://github.com/apple/ml-mobileclip   # the `mobileclip` package
    curl -LO https://docs-assets.developer.apple.com/ml-research/datasets/mobileclip/mobileclip_s0.pt
    python Models/export_mobileclip.py --checkpoint mobileclip_s0.pt --out-dir Models/generated

    # or any open_clip MobileCLIP model (e.g. MobileCLIP2-S0), same output contract:
    pip install open_clip_torch timm
    python Models/export_mobileclip.py --backend open_clip --model MobileCLIP2-S0 --pretrained dfndr2b

Outputs (in --out-dir):
- mobileclip_s0_image.onnx: input `image` [1,3,256,256] float32 = RGB / 255 after the
  model's own transform geometry (shorter side resized to 256, bilinear; centre crop 256), output
  `embedding` [1,512] float32, NOT normalised. The model is reparameterised first
  (MobileOne branches folded: `reparameterize_model`), exported in eval mode at opset 17.
  Any mean/std the backend wants (ml-mobileclip uses none) is folded into the graph, so the
  input contract is always "RGB / 255".
- mobileclip_s0_prompts.json: the prompt-embeddings file (format in
  proofkit_models/prompt_embeddings.py and Models/MODELS.md), text embeddings L2-normalised,
  tied to the ONNX file by its sha256.
The script checks the ONNX export against torch on a test image (max abs diff <= 1e-3 after
normalisation) and prints the scorer's result for --check-image photos.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
# onnxruntime writes a telemetry cache (~/.cache/Microsoft) on import unless this is set; every
# child process inherits it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from proofkit_models import prompt_embeddings as pe  # noqa: E402

IMAGE_SIZE = 256


def load_mobileclip(checkpoint: str, model_name: str):
    import mobileclip
    from mobileclip.modules.common.mobileone import reparameterize_model
    model, _, _ = mobileclip.create_model_and_transforms(model_name, pretrained=checkpoint,
                                                         reparameterize=False)
    model.eval()
    model = reparameterize_model(model)
    model.eval()
    tokenizer = mobileclip.get_tokenizer(model_name)
    # ml-mobileclip's transform: Resize(256, bilinear) + CenterCrop(256) + ToTensor(): no mean/std.
    return model, tokenizer, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), model.image_encoder


def load_open_clip(model_name: str, pretrained: str):
    import open_clip
    from timm.utils.model import reparameterize_model
    model, _, preprocess = open_clip.create_model_and_transforms(model_name, pretrained=pretrained)
    model.eval()
    model = reparameterize_model(model)
    model.eval()
    tokenizer = open_clip.get_tokenizer(model_name)
    cfg = getattr(model.visual, "preprocess_cfg", {}) or {}
    mean = tuple(cfg.get("mean", (0.0, 0.0, 0.0)))
    std = tuple(cfg.get("std", (1.0, 1.0, 1.0)))
    size = cfg.get("size", IMAGE_SIZE)
    size = size[0] if isinstance(size, (tuple, list)) else size
    if size != IMAGE_SIZE:
        raise SystemExit(f"{model_name} takes {size} px input; proofkit's scorer expects {IMAGE_SIZE}")
    return model, tokenizer, mean, std, model.visual


def preprocess(path: str):
    """Shorter side -> 256 (bilinear), centre crop 256, RGB / 255, NCHW float32."""
    import numpy as np
    from PIL import Image, ImageOps
    img = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    w, h = img.size
    s = IMAGE_SIZE / min(w, h)
    img = img.resize((max(IMAGE_SIZE, round(w * s)), max(IMAGE_SIZE, round(h * s))), Image.Resampling.BILINEAR)
    left, top = (img.width - IMAGE_SIZE) // 2, (img.height - IMAGE_SIZE) // 2
    img = img.crop((left, top, left + IMAGE_SIZE, top + IMAGE_SIZE))
    return (np.asarray(img, dtype=np.float32) / 255.0).transpose(2, 0, 1)[None].copy()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["mobileclip", "open_clip"], default="mobileclip")
    ap.add_argument("--model", default="mobileclip_s0", help="ml-mobileclip or open_clip model name")
    ap.add_argument("--checkpoint", help="ml-mobileclip checkpoint (.pt)")
    ap.add_argument("--pretrained", default=None, help="open_clip pretrained tag")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "generated"))
    ap.add_argument("--name", default="mobileclip_s0", help="output file prefix and model name")
    ap.add_argument("--check-image", action="append", default=[], help="photo(s) to score after export")
    a = ap.parse_args()

    import numpy as np
    import onnxruntime as ort
    import torch

    if a.backend == "mobileclip":
        if not a.checkpoint:
            ap.error("--checkpoint is required with the mobileclip backend")
        model, tokenizer, mean, std, encoder = load_mobileclip(a.checkpoint, a.model)
    else:
        model, tokenizer, mean, std, encoder = load_open_clip(a.model, a.pretrained)

    class ImageEncoder(torch.nn.Module):
        """RGB / 255 in, unnormalised embedding out; the backend's mean/std folded in."""

        def __init__(self, enc):
            super().__init__()
            self.enc = enc
            self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1))
            self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1))

        def forward(self, image):
            out = self.enc((image - self.mean) / self.std)
            if isinstance(out, dict):  # ml-mobileclip's MCi may return {"logits": ...}
                out = out["logits"]
            return out

    wrapper = ImageEncoder(encoder).eval()
    os.makedirs(a.out_dir, exist_ok=True)
    onnx_path = os.path.join(a.out_dir, f"{a.name}_image.onnx")
    dummy = torch.rand(1, 3, IMAGE_SIZE, IMAGE_SIZE, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.onnx.export(wrapper, dummy, onnx_path + ".tmp", input_names=["image"],
                          output_names=["embedding"], opset_version=17, do_constant_folding=True,
                          dynamo=False)
    os.replace(onnx_path + ".tmp", onnx_path)

    # The export must agree with torch.
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    with torch.no_grad():
        want = wrapper(dummy).numpy()
    got = sess.run(["embedding"], {"image": dummy.numpy()})[0]
    diff = float(np.abs(pe.l2_normalize(got) - pe.l2_normalize(want)).max())
    print(f"ONNX vs torch, normalised embedding max abs diff: {diff:.2e}")
    if diff > 1e-3:
        raise SystemExit("the ONNX export does not match torch")
    dim = got.shape[-1]

    def embed(prompts):
        with torch.no_grad():
            tokens = tokenizer(prompts)
            feats = model.encode_text(tokens)
        return [(p, pe.l2_normalize(f.numpy().astype(np.float64))) for p, f in zip(prompts, feats)]

    with open(onnx_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    text = pe.dumps(a.name, sha, embed(pe.MAT_PROMPTS), embed(pe.OTHER_PROMPTS))
    prompts_path = os.path.join(a.out_dir, f"{a.name}_prompts.json")
    with open(prompts_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(prompts_path + ".tmp", prompts_path)
    print(f"wrote {onnx_path} (sha256 {sha}, dim {dim})")
    print(f"wrote {prompts_path} ({len(pe.MAT_PROMPTS)} mat prompts, {len(pe.OTHER_PROMPTS)} other prompts)")

    d = pe.load(prompts_path)
    for path in a.check_image:
        emb = sess.run(["embedding"], {"image": preprocess(path)})[0][0]
        s, cos = pe.score(emb, d)
        best = int(np.argmax(cos))
        prompts = [i["prompt"] for i in d["mat"] + d["other"]]
        print(f"{path}: score {s:.3f} ({'pass' if s >= d['threshold'] else 'fail'}), "
              f"closest prompt {prompts[best]!r} (cos {cos[best]:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
