#!/usr/bin/env python3
"""Accuracy study of the Lite0 mat scorer on ../shared/data/images (16 mats, 36 others).

    PYTHONPATH=Models .deps/venv/bin/python Models/study_accuracy.py [--images DIR] [--out FILE]

Needs the models from Models/build.sh. Prints a report and writes it as JSON (default
Models/generated/accuracy_study.json). It checks, in order:
1. the fp32 model against reference_scores.tsv (class-741 scores within 0.05; same pipeline);
2. the int8 model's verdicts against fp32's;
3. scoring rules that fit nothing: the centre crop (the reference), and the five-crop rule
   (centre crop + four corner zooms, max of p741) with its zoom size varied;
4. a logistic-regression head on the 1280-d embedding, measured leave-one-out (each photo is
   scored by a head fitted on the other 51): the only honest figure for a head fitted on 52 photos;
5. enrolment: cosine similarity between embeddings, i.e. what accepting "the person's own mat,
   photographed once at set-up" would accept and reject.
"""
from __future__ import annotations

import os

# ONNX Runtime's Python package writes a telemetry cache unless this is set (before import).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import argparse
import csv
import json
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from proofkit_models import imaging as im  # noqa: E402
from proofkit_models.mat_scorer import (FIVE_CROP_ZOOM, LITE_THRESHOLD, ENROL_THRESHOLD,  # noqa: E402
                                        five_crop_views)

MAT = 741


def session(path: str):
    import onnxruntime as ort
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def run(sess, imgs: list[Image.Image]):
    x = np.concatenate([im.lite_tensor(i) for i in imgs])
    logits, emb = sess.run(["logits", "embedding"], {"input": x})
    return im.softmax(logits), emb


def fit_logistic(X, y, lam):
    """L2-regularised, class-balanced logistic regression by Newton's method on standardised X."""
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    cw = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    w = np.zeros(Z.shape[1])
    reg = np.full(Z.shape[1], lam)
    reg[-1] = 0.0
    for _ in range(30):
        p = 1 / (1 + np.exp(-np.clip(Z @ w, -30, 30)))
        g = Z.T @ (cw * (p - y)) + reg * w
        H = (Z * (cw * p * (1 - p))[:, None]).T @ Z + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return mu, sd, w


def predict_logistic(model, X):
    mu, sd, w = model
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    return 1 / (1 + np.exp(-np.clip(Z @ w, -30, 30)))


def summary(name, scores, labels, files, threshold):
    acc = scores >= threshold
    mats = labels == 1
    return {
        "rule": name, "threshold": threshold,
        "recall": f"{int(acc[mats].sum())}/{int(mats.sum())}",
        "false_accepts": f"{int(acc[~mats].sum())}/{int((~mats).sum())}",
        "missed": [files[i] for i in np.where(mats & ~acc)[0]],
        "falsely_accepted": [files[i] for i in np.where(~mats & acc)[0]],
        "highest_other": round(float(scores[~mats].max()), 4),
        "lowest_accepted_mat": round(float(scores[mats & acc].min()), 4) if (mats & acc).any() else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", default=os.path.join(HERE, "..", "..", "shared", "data", "images"))
    ap.add_argument("--models", default=os.path.join(HERE, "generated"))
    ap.add_argument("--out", default=os.path.join(HERE, "generated", "accuracy_study.json"))
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.images, "reference_scores.tsv")):
        a.images = os.path.join(HERE, "..", "..", "..", "shared", "data", "images")
    rows = list(csv.DictReader(open(os.path.join(a.images, "reference_scores.tsv")), delimiter="\t"))
    files = [r["file"] for r in rows]
    labels = np.array([r["label"] == "mat" for r in rows], dtype=float)
    fp = session(os.path.join(a.models, "efficientnet_lite0_fp32.onnx"))
    q8 = session(os.path.join(a.models, "efficientnet_lite0_int8.onnx"))

    zooms = [0.5, FIVE_CROP_ZOOM, 0.7]
    per = {z: {"fp32": [], "int8": [], "emb": []} for z in zooms}
    top1 = {"fp32": [], "int8": []}
    center_emb = []
    ref_diff = []
    for r in rows:
        img = im.open_rgb(os.path.join(a.images, r["file"]))
        for z in zooms:
            views = five_crop_views(img, z)
            p, e = run(fp, views)
            p8, _ = run(q8, views)
            per[z]["fp32"].append(p[:, MAT])
            per[z]["int8"].append(p8[:, MAT])
            per[z]["emb"].append(e)
            if z == FIVE_CROP_ZOOM:
                top1["fp32"].append(int(p[0].argmax()))
                top1["int8"].append(int(p8[0].argmax()))
        center_emb.append(per[FIVE_CROP_ZOOM]["emb"][-1][0])
        ref_diff.append(abs(per[FIVE_CROP_ZOOM]["fp32"][-1][0] - float(r["p741_fp32"])))
    report = {"images": len(rows), "mats": int(labels.sum()), "others": int(len(rows) - labels.sum())}
    report["fp32_vs_reference_max_abs_diff_p741"] = float(max(ref_diff))

    P = {z: np.array(per[z]["fp32"]) for z in zooms}
    P8 = {z: np.array(per[z]["int8"]) for z in zooms}
    c32, c8 = P[FIVE_CROP_ZOOM][:, 0], P8[FIVE_CROP_ZOOM][:, 0]
    report["int8_vs_fp32"] = {
        "centre_top1_agreement": f"{sum(x == y for x, y in zip(top1['fp32'], top1['int8']))}/{len(rows)}",
        "centre_p741_max_abs_diff": round(float(np.abs(c32 - c8).max()), 4),
        "centre_verdict_agreement": f"{int(((c32 >= LITE_THRESHOLD) == (c8 >= LITE_THRESHOLD)).sum())}/{len(rows)}",
        "five_crop_verdict_agreement": f"{int(((P[FIVE_CROP_ZOOM].max(1) >= LITE_THRESHOLD) == (P8[FIVE_CROP_ZOOM].max(1) >= LITE_THRESHOLD)).sum())}/{len(rows)}",
    }
    rules = [summary("centre crop p741 (reference pipeline)", c32, labels, files, LITE_THRESHOLD),
             summary("centre crop p741, int8", c8, labels, files, LITE_THRESHOLD)]
    for z in zooms:
        rules.append(summary(f"five-crop max p741, zoom {z}", P[z].max(1), labels, files, LITE_THRESHOLD))
    rules.append(summary(f"five-crop max p741, zoom {FIVE_CROP_ZOOM}, int8", P8[FIVE_CROP_ZOOM].max(1),
                         labels, files, LITE_THRESHOLD))
    report["rules"] = rules

    # Leave-one-out logistic head on the centre-crop embedding.
    E = np.array(center_emb, dtype=np.float64)
    heads = []
    for lam in (1.0, 10.0, 100.0):
        loo = np.zeros(len(rows))
        for i in range(len(rows)):
            keep = np.arange(len(rows)) != i
            loo[i] = predict_logistic(fit_logistic(E[keep], labels[keep], lam), E[i:i + 1])[0]
        for th in (0.5, 0.9):
            s = summary(f"LOO logistic head on the embedding, L2 {lam}", loo, labels, files, th)
            heads.append(s)
            both = np.maximum(loo * (loo >= th), P[FIVE_CROP_ZOOM].max(1) >= LITE_THRESHOLD)
            s2 = summary(f"five-crop OR LOO head (L2 {lam}, >= {th})", both.astype(float), labels, files, 0.5)
            heads.append(s2)
    report["held_out_heads"] = heads

    # Enrolment: cosine between centre-crop embeddings.
    En = E / np.linalg.norm(E, axis=1, keepdims=True)
    C = En @ En.T
    m = labels == 1
    mm = C[np.ix_(m, m)] - 9 * np.eye(int(m.sum()))
    oo = C[np.ix_(~m, ~m)] - 9 * np.eye(int((~m).sum()))
    mat_files = [f for f, l in zip(files, labels) if l]
    i42, i46 = files.index("mat/mat_042.jpg"), files.index("mat/mat_046.jpg")
    report["enrolment"] = {
        "threshold": ENROL_THRESHOLD,
        "highest_cosine_mat_vs_other": round(float(C[np.ix_(m, ~m)].max()), 4),
        "highest_cosine_other_vs_other": round(float(oo.max()), 4),
        "cosine_mat_042_vs_046_same_foam_mat_other_colour": round(float(C[i42, i46]), 4),
        "mat_pairs_at_or_above_threshold": [[mat_files[i], mat_files[j], round(float(mm[i, j]), 4)]
                                            for i in range(len(mat_files)) for j in range(i + 1, len(mat_files))
                                            if mm[i, j] >= ENROL_THRESHOLD],
        "others_accepted_by_enrolling_any_mat": int((C[np.ix_(m, ~m)] >= ENROL_THRESHOLD).any(0).sum()),
    }
    text = json.dumps(report, indent=1) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        f.write(text)
    os.replace(a.out + ".tmp", a.out)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
