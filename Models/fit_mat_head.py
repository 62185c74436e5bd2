#!/usr/bin/env python3
"""Fits the mat head (a logistic regression on EfficientNet-Lite0's 1280-d embedding) and chooses
the mat decision rule by source-disjoint evaluation on the shared photos (issue 20).

    PYTHONPATH=Models .deps/venv/bin/python Models/fit_mat_head.py [--images DIR] [--write]

Run by hand; it needs ../shared/data/images and the models from Models/build.sh. The build never
runs it: the head it writes (Models/mat_head.json, with --write) is committed, and the build only
validates and copies it.

Data. The 52 photos of ../shared/data/images, each with its source repository, kind and group from
Models/mat_head_photos.tsv (the kinds were assigned by looking at the photos). Optionally, extra
negatives that belong to no test source: scikit-image's CC0/public-domain sample photos (the int8
calibration set's, from the pinned wheel).

Features. Each photo is preprocessed as proofkit does (mat_scorer.five_crop_views: the centre crop
of the shorter-side-256 resize and four corner squares of 0.6 x the shorter side, PIL bicubic,
(RGB - 127) / 128), the fp32 model gives the `embedding` output (1280 values after ReLU6 and the
global average pool) of each of the five crops; each is L2-normalised. Training uses all five
crops of each photo as samples, plus (with augmentation) the same photo decoded at a reduced size
(libjpeg DCT scaling, as proofkit's fast path), mirrored, re-cropped, colour-jittered, rotated, and
with a price-tag text drawn over it.

Model. Class-balanced logistic regression with an L2 penalty, fitted by Newton's method:
    minimise  sum_i c_i log(1 + exp(-y_i (w . x_i + b))) / sum_i c_i  +  lam / 2 |w|^2
(c_i makes the mat and not-mat samples weigh half each; the bias is not penalised). A photo's head
score is the maximum over its five crops.

Evaluation. Leave-one-source-out: for each source repository, every fitting step (features
chosen, head fitted, threshold set) sees only the other sources; the held-out source's photos are
scored. Pooled over the rotation this gives one held-apart score per photo. Candidates: penalty,
extra negatives on/off, augmentation on/off, threshold rule, and the combination with class 741
(head alone, or class 741 >= 0.3 OR head >= t). The rule is chosen from the held-apart results by
a criterion fixed before looking: no accepted photo outside the rug-like kinds (carpet, doormat,
cloth), then the highest mat recall, then the fewest rug-like accepts, then the larger penalty.

Writes Models/generated/mat_head_study.json (every candidate, per-photo held-apart scores) and,
with --write, Models/mat_head.json (the head fitted on all 52 photos with the chosen settings).
"""
from __future__ import annotations

import os

# ONNX Runtime's Python package writes a telemetry cache unless this is set (before import).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import argparse
import csv
import hashlib
import io
import json
import sys
import zipfile

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFont, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from proofkit_models import imaging as im  # noqa: E402
from proofkit_models.calibration import SKIMAGE_SAMPLES  # noqa: E402
from proofkit_models.mat_scorer import LITE_THRESHOLD, MAT_CLASS, five_crop_views  # noqa: E402

SKIMAGE_WHEEL = "scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
# Features: "embedding_l2", the L2-normalised 1280-d embedding; "logits", the model's 1000 logits
# (logits = W . embedding + b, the classifier's own layer), standardised on the training photos.
# A head on standardised logits is still linear in the raw embedding, so it is written as one
# (weights W^T (v / sd), bias c + (v / sd) . (b - mean), no normalisation).
PENALTIES = {"embedding_l2": [1e-5, 1e-4, 1e-3, 1e-2], "logits": [1e-3, 1e-2, 1e-1, 1.0]}
FIXED_THRESHOLDS = [0.5, 0.7, 0.9, 0.95, 0.99]
MARGIN = 0.05  # "highest training non-mat + margin", in probability
AUGMENTS = ["plain", "draft", "mirror", "recrop", "jitter", "text", "rotate"]
SEED = 20260601
EXTRACTION_VERSION = 1  # bump when extract() or augment() changes (the cache key)


# ---------------------------------------------------------------- images and embeddings

def draft_open(path: str) -> Image.Image:
    """The photo as proofkit's fast path decodes it: libjpeg DCT scaling to the smallest 1/2,
    1/4 or 1/8 whose shorter side stays >= 256 (PNG: full size), EXIF orientation applied."""
    img = Image.open(path)
    if img.format == "JPEG":
        w, h = img.size
        # draft() picks the largest scale that keeps the requested size: ask for 256 on the
        # shorter side, keeping the aspect.
        s = 256 / min(w, h)
        img.draft("RGB", (max(1, int(w * s)), max(1, int(h * s))))
    img = ImageOps.exif_transpose(img)
    return img.convert("RGB")


def augment(img: Image.Image, kind: str, rng: np.random.Generator) -> Image.Image:
    w, h = img.size
    if kind == "mirror":
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if kind == "recrop":
        scale = rng.uniform(0.55, 0.9)
        cw, ch = int(w * np.sqrt(scale) * rng.uniform(0.9, 1.1)), int(h * np.sqrt(scale) * rng.uniform(0.9, 1.1))
        cw, ch = min(cw, w), min(ch, h)
        x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        out = img.crop((x, y, x + cw, y + ch))
        return out.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if rng.random() < 0.5 else out
    if kind == "jitter":
        out = ImageEnhance.Brightness(img).enhance(rng.uniform(0.7, 1.3))
        out = ImageEnhance.Contrast(out).enhance(rng.uniform(0.7, 1.3))
        return ImageEnhance.Color(out).enhance(rng.uniform(0.6, 1.4))
    if kind == "rotate":
        return img.rotate(float(rng.uniform(-12, 12)), resample=Image.Resampling.BILINEAR, expand=False,
                          fillcolor=tuple(int(c) for c in rng.integers(0, 256, 3)))
    if kind == "text":
        out = img.copy()
        d = ImageDraw.Draw(out)
        words = ["21 pc", "14 pc", "SALE", "-30%", "NEW", "$19.99", "FREE SHIPPING", "2 in 1", "PREMIUM"]
        for _ in range(int(rng.integers(1, 3))):
            size = int(min(w, h) * rng.uniform(0.08, 0.18))
            font = ImageFont.load_default(size=max(10, size))
            text = words[int(rng.integers(len(words)))]
            x, y = int(rng.uniform(0, 0.6) * w), int(rng.uniform(0, 0.85) * h)
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            d.text((x, y), text, fill=colour, font=font, stroke_width=max(1, size // 12),
                   stroke_fill=(255, 255, 255))
        return out
    return img


def session(path: str):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run_views(sess, views: list[Image.Image]) -> tuple[np.ndarray, np.ndarray]:
    """[n, 1280] embeddings and [n] class-741 probabilities of the views."""
    x = np.concatenate([im.lite_tensor(v) for v in views])
    logits, emb = sess.run(["logits", "embedding"], {"input": x})
    return emb.astype(np.float64), im.softmax(logits)[:, MAT_CLASS]


def file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def extract(photos: list[dict], images: str, models: str, wheels: str, cache: str) -> dict:
    """Embeddings of every photo and variant, cached by the model's and the photos' digests."""
    fp32 = os.path.join(models, "efficientnet_lite0_fp32.onnx")
    int8 = os.path.join(models, "efficientnet_lite0_int8.onnx")
    key = hashlib.sha256(json.dumps({
        "fp32": file_digest(fp32), "int8": file_digest(int8), "augments": AUGMENTS, "seed": SEED,
        "photos": [(p["file"], file_digest(os.path.join(images, p["file"]))) for p in photos],
        "extraction": EXTRACTION_VERSION}).encode()).hexdigest()
    if os.path.exists(cache):
        data = np.load(cache, allow_pickle=False)
        if str(data["key"]) == key:
            return {k: data[k] for k in data.files}
    sess, sess8 = session(fp32), session(int8)
    rng = np.random.default_rng(SEED)
    emb, p741, photo_index, variant, emb8, p741_8 = [], [], [], [], [], []
    for i, p in enumerate(photos):
        path = os.path.join(images, p["file"])
        full = im.open_rgb(path)
        for a in AUGMENTS:
            base = draft_open(path) if a == "draft" else full
            e, q = run_views(sess, five_crop_views(augment(base, a, rng)))
            emb.append(e)
            p741.append(q)
            photo_index += [i] * 5
            variant += [AUGMENTS.index(a)] * 5
            if a in ("plain", "draft"):
                e8, q8 = run_views(sess8, five_crop_views(base))
                emb8.append(e8)
                p741_8.append(q8)
        print(f"  embeddings {i + 1}/{len(photos)}", end="\r", file=sys.stderr)
    print(file=sys.stderr)
    # Extra negatives from no test source: scikit-image's CC0 / public-domain photos, plain,
    # mirrored and re-cropped.
    extra = []
    with zipfile.ZipFile(os.path.join(wheels, SKIMAGE_WHEEL)) as z:
        for name in SKIMAGE_SAMPLES:
            img = Image.open(io.BytesIO(z.read(f"skimage/data/{name}"))).convert("RGB")
            if min(img.size) < 256:
                img = im.resize_shorter(img)
            for a in ("plain", "mirror", "recrop"):
                e, _ = run_views(sess, five_crop_views(augment(img, a, rng)))
                extra.append(e)
    out = {"key": np.array(key), "emb": np.concatenate(emb), "p741": np.concatenate(p741),
           "photo": np.array(photo_index), "variant": np.array(variant),
           "emb8": np.concatenate(emb8), "p741_8": np.concatenate(p741_8), "extra": np.concatenate(extra)}
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    tmp = cache + ".tmp.npz"
    np.savez(tmp, **out)
    os.replace(tmp, cache)
    return out


# ---------------------------------------------------------------- the model

def l2n(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def fit(X: np.ndarray, y: np.ndarray, lam: float, iters: int = 3000) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression (see the module doc), minimised by L-BFGS with a
    backtracking line search until the gradient's largest entry is below 1e-7: the objective is
    smooth and strictly convex, so this is its unique minimum (Newton's method gets the same
    weights to 1e-6 but costs a 1281 x 1281 Hessian per step)."""
    n, d = X.shape
    c = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))
    Z = np.hstack([X, np.ones((n, 1))])
    s = 2 * y - 1
    reg = np.full(d + 1, lam)
    reg[-1] = 0.0

    def loss_grad(w):
        m = s * (Z @ w)
        loss = float(c @ np.logaddexp(0, -m)) + 0.5 * float(reg @ (w * w))
        g = Z.T @ (c * -s * (1 / (1 + np.exp(np.clip(m, -40, 40))))) + reg * w
        return loss, g

    w = np.zeros(d + 1)
    f, g = loss_grad(w)
    S, Y = [], []
    for _ in range(iters):
        if np.abs(g).max() < 1e-7:
            break
        q = g.copy()
        alphas = []
        for s_k, y_k in reversed(list(zip(S, Y))):
            a = (s_k @ q) / (y_k @ s_k)
            alphas.append(a)
            q -= a * y_k
        if S:
            q *= (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1])
        for (s_k, y_k), a in zip(zip(S, Y), reversed(alphas)):
            q += s_k * (a - (y_k @ q) / (y_k @ s_k))
        direction = -q
        step = 1.0
        while True:
            w_new = w + step * direction
            f_new, g_new = loss_grad(w_new)
            if f_new <= f + 1e-4 * step * (g @ direction) or step < 1e-12:
                break
            step *= 0.5
        s_k, y_k = w_new - w, g_new - g
        if s_k @ y_k > 1e-16:
            S.append(s_k)
            Y.append(y_k)
            if len(S) > 20:
                S.pop(0)
                Y.pop(0)
        w, f, g = w_new, f_new, g_new
    return w[:-1], float(w[-1])


def head_prob(w: np.ndarray, b: float, X: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(X @ w + b, -40, 40)))


def photo_scores(crop_scores: np.ndarray) -> np.ndarray:
    """[photos * 5] -> [photos]: the maximum over each photo's five crops."""
    return crop_scores.reshape(-1, 5).max(1)


# ---------------------------------------------------------------- evaluation

def candidates():
    for features, penalties in PENALTIES.items():
        for lam in penalties:
            for extra in (False, True):
                for aug in (False, True):
                    yield {"features": features, "penalty": lam, "extra_negatives": extra, "augmentation": aug}


def classifier_layer(models: str) -> tuple[np.ndarray, np.ndarray]:
    """The fp32 model's last layer: W [1000, 1280] and b [1000] (logits = embedding . W^T + b)."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(os.path.join(models, "efficientnet_lite0_fp32.onnx"))
    arrays = [numpy_helper.to_array(i) for i in model.graph.initializer]
    W = next(a for a in arrays if a.shape in ((1000, 1280), (1280, 1000))).astype(np.float64)
    B = next(a for a in arrays if a.shape == (1000,)).astype(np.float64)
    return (W.T if W.shape == (1280, 1000) else W), B


def fit_head(data, photos, train_idx, cand, layer):
    """Fits a candidate on the training photos; returns (weights on the embedding, bias, l2)."""
    keep = np.isin(data["photo"], train_idx)
    if not cand["augmentation"]:
        keep &= data["variant"] == AUGMENTS.index("plain")
    E = data["emb"][keep]
    y = np.array([photos[i]["group"] == "mat" for i in data["photo"][keep]], dtype=float)
    if cand["extra_negatives"]:
        E = np.vstack([E, data["extra"]])
        y = np.concatenate([y, np.zeros(len(data["extra"]))])
    if cand["features"] == "embedding_l2":
        w, b = fit(l2n(E), y, cand["penalty"])
        return w, b, True
    W, B = layer
    L = E @ W.T + B
    mu, sd = L.mean(0), L.std(0) + 1e-6
    v, c = fit((L - mu) / sd, y, cand["penalty"])
    return W.T @ (v / sd), float(c + (v / sd) @ (B - mu)), False


def test_scores(data, head, variant="plain", int8=False):
    """Per-photo head scores (max over the five crops) of the plain or draft-decoded photos."""
    w, b, l2 = head
    if int8:
        sel = np.arange(len(data["emb8"])).reshape(-1, 2, 5)[:, 0 if variant == "plain" else 1].ravel()
        E = data["emb8"][sel]
    else:
        E = data["emb"][data["variant"] == AUGMENTS.index(variant)]
    return photo_scores(head_prob(w, b, l2n(E) if l2 else E))


def class_scores(data, variant="plain", int8=False):
    if int8:
        sel = np.arange(len(data["p741_8"])).reshape(-1, 2, 5)[:, 0 if variant == "plain" else 1].ravel()
        return photo_scores(data["p741_8"][sel])
    return photo_scores(data["p741"][data["variant"] == AUGMENTS.index(variant)])


def threshold_rules(train_scores, train_groups):
    """The thresholds each rule gives, from the training photos' own head scores."""
    others = train_scores[train_groups != "mat"]
    rules = {f"p>={t}": t for t in FIXED_THRESHOLDS}
    rules["max_train_other+0.05"] = float(min(1.0, others.max() + MARGIN))
    return rules


def tally(accepted: np.ndarray, photos: list[dict]) -> dict:
    groups = np.array([p["group"] for p in photos])
    kinds = np.array([p["kind"] for p in photos])
    mats = groups == "mat"
    out = {"mats": f"{int(accepted[mats].sum())}/{int(mats.sum())}",
           "recall": round(float(accepted[mats].mean()), 4),
           "forbidden_accepted": int(accepted[groups == "forbidden"].sum()),
           "ruglike_accepted": int(accepted[groups == "ruglike"].sum()),
           "other_accepted": int(accepted[groups == "other"].sum()),
           "by_kind": {}}
    for k in sorted(set(kinds), key=lambda k: (k not in {"flat", "close_up", "folded", "product", "text_overlay"}, k)):
        sel = kinds == k
        out["by_kind"][k] = f"{int(accepted[sel].sum())}/{int(sel.sum())}"
    out["accepted_non_mats"] = [photos[i]["file"] for i in np.where(accepted & ~mats)[0]]
    out["missed_mats"] = [photos[i]["file"] for i in np.where(~accepted & mats)[0]]
    return out


def auc(scores, labels):
    pos, neg = scores[labels], scores[~labels]
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / (len(pos) * len(neg)))


def loso(data, photos, cand, layer, within=None):
    """Leave-one-source-out: held-apart head scores and per-rule thresholds for every photo
    (only over the photos `within`, all by default; the others' entries stay 0)."""
    within = set(range(len(photos))) if within is None else set(within)
    sources = sorted({photos[i]["source"] for i in within})
    groups = np.array([p["group"] for p in photos])
    n = len(photos)
    held = np.zeros(n)
    held_draft = np.zeros(n)
    thresholds = {}
    for s in sources:
        test = np.array([i for i in sorted(within) if photos[i]["source"] == s])
        train = np.array([i for i in sorted(within) if photos[i]["source"] != s])
        head = fit_head(data, photos, train, cand, layer)
        scores = test_scores(data, head)
        held[test] = scores[test]
        held_draft[test] = test_scores(data, head, "draft")[test]
        for rule, t in threshold_rules(scores[train], groups[train]).items():
            thresholds.setdefault(rule, np.zeros(n))[test] = t
    return held, held_draft, thresholds


def evaluate(data, photos, layer, cls_accept, cand, within=None, draft_cls_accept=None):
    """Every threshold rule and combination of one candidate, as held-apart result rows."""
    idx = np.array(sorted(range(len(photos)) if within is None else within))
    sub = [photos[i] for i in idx]
    mats = np.array([p["group"] == "mat" for p in sub])
    held, held_draft, thresholds = loso(data, photos, cand, layer, idx)
    rows = []
    for rule, t in thresholds.items():
        for combo in ("head", "class_or_head"):
            acc = held >= t
            acc_draft = held_draft >= t
            if combo == "class_or_head":
                acc = acc | cls_accept
                if draft_cls_accept is not None:
                    acc_draft = acc_draft | draft_cls_accept
            row = {**cand, "threshold_rule": rule, "combination": combo,
                   "held_apart_auc": round(auc(held[idx], mats), 4), "held_apart": tally(acc[idx], sub)}
            if within is None:
                row["held_apart_draft_decode"] = tally(acc_draft, photos)
                row["held_apart_scores"] = {p["file"]: round(float(x), 4) for p, x in zip(photos, held)}
                row["thresholds_by_fold"] = sorted({round(float(x), 4) for x in t})
            rows.append(row)
    return rows


def nested(data, photos, layer, cls_accept, candidate_list):
    """The whole selection, nested: for each source, the rule is chosen (by ``choose``) from a
    leave-one-source-out study of the other sources alone, fitted on them, and only then applied
    to the held-out source. Its pooled result is the figure for the procedure itself, free of
    the optimism of choosing among many candidates on the same held-apart scores."""
    groups = np.array([p["group"] for p in photos])
    accepted = np.zeros(len(photos), dtype=bool)
    picks = {}
    for s in sorted({p["source"] for p in photos}):
        test = np.array([i for i, p in enumerate(photos) if p["source"] == s])
        train = np.array([i for i, p in enumerate(photos) if p["source"] != s])
        rows = []
        for cand in candidate_list:
            rows += evaluate(data, photos, layer, cls_accept, cand, within=train)
        best = choose(rows)
        cand = {k: best[k] for k in ("features", "penalty", "extra_negatives", "augmentation")}
        head = fit_head(data, photos, train, cand, layer)
        scores = test_scores(data, head)
        t = threshold_rules(scores[train], groups[train])[best["threshold_rule"]]
        acc = scores >= t
        if best["combination"] == "class_or_head":
            acc = acc | cls_accept
        accepted[test] = acc[test]
        picks[s] = {k: best[k] for k in ("features", "penalty", "extra_negatives", "augmentation",
                                          "threshold_rule", "combination")}
        print(f"  nested: {s} -> {picks[s]}", file=sys.stderr)
    return tally(accepted, photos), picks


def choose(results, strict=False):
    """The done-when criterion: no forbidden photo accepted, then the highest mat recall, then
    the fewest other and rug-like accepts, then the held-apart AUC. strict: no accept outside
    the rug-like kinds at all (floor, furniture, lamp, pillow count as forbidden)."""
    def key(r):
        h = r["held_apart"]
        clean = h["forbidden_accepted"] == 0 and (not strict or h["other_accepted"] == 0)
        return (clean, h["recall"], -h["other_accepted"], -h["ruglike_accepted"], r["held_apart_auc"])
    return max(results, key=key)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(HERE)
    ap.add_argument("--images", default=os.path.join(root, "..", "shared", "data", "images"))
    ap.add_argument("--models", default=os.path.join(HERE, "generated"))
    ap.add_argument("--wheels", default=os.path.join(root, ".deps", "wheels"))
    ap.add_argument("--photos", default=os.path.join(HERE, "mat_head_photos.tsv"))
    ap.add_argument("--out", default=os.path.join(HERE, "generated", "mat_head_study.json"))
    ap.add_argument("--head", default=os.path.join(HERE, "mat_head.json"))
    ap.add_argument("--write", action="store_true", help="write the chosen head to --head")
    ap.add_argument("--nested", action="store_true",
                    help="also run the whole selection nested in the rotation (candidates without augmentation)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.images, "MANIFEST.tsv")):
        alt = os.path.join(root, "..", "..", "shared", "data", "images")  # from a worktree
        if os.path.exists(os.path.join(alt, "MANIFEST.tsv")):
            a.images = alt
        else:
            print(f"fit_mat_head: no photos in {a.images} (needs ../shared/data/images)", file=sys.stderr)
            return 66
    photos = list(csv.DictReader((l for l in open(a.photos) if not l.startswith("#")), delimiter="\t"))
    manifest = {r["file"]: r for r in csv.DictReader(open(os.path.join(a.images, "MANIFEST.tsv")), delimiter="\t")}
    for p in photos:  # the committed table must agree with the data's MANIFEST
        m = manifest[p["file"]]
        if m["source_repo"] != p["source"] or (m["label"] == "mat") != (p["group"] == "mat"):
            raise SystemExit(f"{p['file']}: mat_head_photos.tsv disagrees with MANIFEST.tsv")
    data = extract(photos, a.images, a.models, a.wheels, os.path.join(a.models, "mat_head_embeddings.npz"))
    layer = classifier_layer(a.models)
    groups = np.array([p["group"] for p in photos])
    mats = groups == "mat"
    cls = class_scores(data)
    cls_accept = cls >= LITE_THRESHOLD

    report = {"photos": len(photos), "mats": int(mats.sum()), "sources": sorted({p["source"] for p in photos}),
              "baseline_class741": tally(cls_accept, photos), "baseline_auc": round(auc(cls, mats), 4),
              "candidates": []}
    for cand in candidates():
        report["candidates"] += evaluate(data, photos, layer, cls_accept, cand,
                                         draft_cls_accept=class_scores(data, "draft") >= LITE_THRESHOLD)
        print(f"  evaluated {cand}", file=sys.stderr)
    if a.nested:
        # Without augmentation (7x fewer samples) to keep it to minutes.
        report["nested"], report["nested_picks"] = nested(
            data, photos, layer, cls_accept, [c for c in candidates() if not c["augmentation"]])
    settings = ("features", "penalty", "extra_negatives", "augmentation", "threshold_rule", "combination")
    best = choose(report["candidates"])
    strict = choose(report["candidates"], strict=True)
    report["chosen"] = {k: best[k] for k in settings}
    report["chosen_strict"] = {k: strict[k] for k in settings}
    report["chosen_strict_held_apart"] = strict["held_apart"]

    # The final head: the chosen settings fitted on every photo; its threshold by the same rule.
    cand = {k: best[k] for k in ("features", "penalty", "extra_negatives", "augmentation")}
    head = fit_head(data, photos, np.arange(len(photos)), cand, layer)
    w, b, l2 = head
    scores = test_scores(data, head)
    t = threshold_rules(scores, groups)[best["threshold_rule"]]
    def combined(s, c):
        return (s >= t) | (c >= LITE_THRESHOLD) if best["combination"] == "class_or_head" else s >= t
    s8 = test_scores(data, head, int8=True)
    c8 = class_scores(data, int8=True)
    sd, cd = test_scores(data, head, "draft"), class_scores(data, "draft")
    s8d, c8d = test_scores(data, head, "draft", int8=True), class_scores(data, "draft", int8=True)
    report["final"] = {
        "threshold": round(t, 6), "all_data_fp32": tally(combined(scores, cls), photos),
        "all_data_int8": tally(combined(s8, c8), photos),
        "all_data_fp32_draft_decode": tally(combined(sd, cd), photos),
        "all_data_int8_draft_decode": tally(combined(s8d, c8d), photos),
        "int8_vs_fp32_head_score_max_abs_diff": round(float(np.abs(s8 - scores).max()), 4),
        "int8_vs_fp32_verdicts_equal": int((combined(s8, c8) == combined(scores, cls)).sum()),
        "scores_fp32": {p["file"]: [round(float(x), 4), round(float(c), 4)] for p, x, c in zip(photos, scores, cls)},
        "scores_int8_draft": {p["file"]: [round(float(x), 4), round(float(c), 4)]
                              for p, x, c in zip(photos, s8d, c8d)},
    }
    text = json.dumps(report, indent=1) + "\n"
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)

    # Summary on stdout.
    print(f"baseline class 741 >= 0.3: {report['baseline_class741']['mats']} mats, "
          f"non-mats accepted {report['baseline_class741']['accepted_non_mats']}, AUC {report['baseline_auc']}")
    ranked = sorted(report["candidates"], key=lambda r: (-(r["held_apart"]["forbidden_accepted"] == 0),
                                                         -r["held_apart"]["recall"], r["held_apart"]["other_accepted"],
                                                         r["held_apart"]["ruglike_accepted"]))
    print("held-apart (leave one source out), best 30:")
    for r in ranked[:30]:
        h = r["held_apart"]
        print(f"  {r['features']:<12} lam {r['penalty']:<6} extra {int(r['extra_negatives'])} aug {int(r['augmentation'])} "
              f"{r['threshold_rule']:<22} {r['combination']:<13} mats {h['mats']:<6} forbidden {h['forbidden_accepted']} "
              f"other {h['other_accepted']} ruglike {h['ruglike_accepted']} auc {r['held_apart_auc']}")
    print("chosen (strict: nothing outside the rug-likes):", json.dumps(report["chosen_strict"]))
    print("  held apart:", json.dumps(strict["held_apart"]))
    print("chosen:", json.dumps(report["chosen"]))
    print("held apart:", json.dumps({k: best["held_apart"][k] for k in best["held_apart"]}))
    print("held apart, DCT-scaled decode:", json.dumps(best["held_apart_draft_decode"]))
    if a.nested:
        print("nested selection (held apart, non-augmented candidates):", json.dumps(report["nested"]))
    print("final head: threshold", round(t, 4))
    for k in ("all_data_fp32", "all_data_int8", "all_data_fp32_draft_decode", "all_data_int8_draft_decode"):
        print(f"  {k}:", json.dumps(report["final"][k]))
    print("  int8 vs fp32 head score max diff", report["final"]["int8_vs_fp32_head_score_max_abs_diff"])
    if a.write:
        head = {"format": "proofkit-mat-head", "version": 1,
                "model": "efficientnet_lite0", "input": "embedding", **({"normalize": "l2"} if l2 else {}),
                "crops": "five-crop, maximum", "threshold": round(t, 6),
                "combination": best["combination"], "class_threshold": LITE_THRESHOLD,
                "fitted": {k: best[k] for k in settings if k != "combination"},
                "bias": float(np.float32(b)), "weights": [float(np.float32(x)) for x in w]}
        text = json.dumps(head, separators=(",", ":")) + "\n"
        tmp = a.head + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.head)
        print("wrote", a.head, "sha256", hashlib.sha256(text.encode()).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
