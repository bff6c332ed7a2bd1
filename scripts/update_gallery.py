"""Regenerate the documentation gallery from quick ``specdyn reproduce`` runs.

For every registered experiment (``specdyn.runs.builtin_names()``, or the names
given on the command line) this runs ``specdyn reproduce NAME --out OUT`` in a
subprocess (one failing experiment does not stop the others), copies each PNG
the experiment wrote into ``docs/gallery/`` as a small PNG (downscaled until it
is at most ``--max-kb`` kilobytes), and rewrites ``docs/gallery.md`` so that the
page lists every experiment with the command that made its figure and
references only images that exist.

Usage::

    python scripts/update_gallery.py                 # run every experiment (quick)
    python scripts/update_gallery.py fig2 fig3       # only these
    python scripts/update_gallery.py --from-dir specdyn-out   # reuse existing runs
    python scripts/update_gallery.py --stale         # only missing or out-of-date figures
    python scripts/update_gallery.py --page-only     # just rewrite docs/gallery.md

Experiments that fail keep their previous images (if any) and are listed in the
page with a note; the script exits non-zero when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from specdyn.runs.claims import mark, md_cell

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
MANIFEST = GALLERY / "manifest.json"


def _shrink_png(src: Path, dst: Path, max_kb: int, max_width: int) -> None:
    """Write ``src`` to ``dst`` as a PNG of at most ``max_kb`` kB, downscaling as needed."""
    from PIL import Image

    with Image.open(src) as im:
        im.load()
        img = im.convert("RGB") if im.mode in ("RGBA", "P", "LA") else im.copy()
    if img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)),
                         Image.Resampling.LANCZOS)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_suffix(".tmp.png")
    while True:
        img.save(tmp, format="PNG", optimize=True)
        if tmp.stat().st_size <= max_kb * 1024 or img.width < 300:
            break
        img = img.resize((int(img.width * 0.8), int(img.height * 0.8)), Image.Resampling.LANCZOS)
    os.replace(tmp, dst)


def _run_one(name: str, out: Path, timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "specdyn", "reproduce", name, "--out", str(out)],
            capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
        )
        ok = proc.returncode == 0
        tail = (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        ok, tail = False, f"timed out after {timeout:.0f} s"
    return {"ok": ok, "wall_s": round(time.perf_counter() - start, 1), "log": tail}


def _collect(name: str, run_dir: Path, max_kb: int, max_width: int) -> list[str]:
    """Copy the PNGs of one experiment into the gallery; return their file names."""
    pngs = sorted(run_dir.glob("*.png"))
    names = []
    for old in GALLERY.glob(f"{name}*.png"):  # drop stale images of this experiment
        if old.stem == name or old.stem.startswith(f"{name}--"):
            old.unlink()
    for png in pngs:
        target = f"{name}.png" if png.stem == name or len(pngs) == 1 else f"{name}--{png.stem}.png"
        _shrink_png(png, GALLERY / target, max_kb, max_width)
        names.append(target)
    return names


def _is_stale(name: str, manifest: dict[str, Any]) -> bool:
    """No image yet, or the experiment's module (or a plot module it uses) is newer."""
    import inspect
    import re

    from specdyn import runs

    images = [GALLERY / img for img in manifest.get(name, {}).get("images", [])]
    if not images or not all(p.exists() for p in images):
        return True
    made = min(p.stat().st_mtime for p in images)
    src = Path(inspect.getsourcefile(runs.get(name).run) or "")
    sources = [src]
    plots = re.findall(r"specdyn\.plot\.(\w+)", src.read_text()) if src.exists() else []
    sources += [ROOT / "src" / "specdyn" / "plot" / f"{p}.py" for p in plots]
    return any(p.exists() and p.stat().st_mtime > made for p in sources)


def _recorded_config(name: str, run_dir: Path) -> str | None:
    """The config in the run's ``record.json``, as TOML (None if unreadable)."""
    from specdyn import runs
    from specdyn.runs.config import config_from_dict, config_to_toml

    rec = run_dir / "record.json"
    try:
        cfg = dict(json.loads(rec.read_text())["config"])
        cfg.pop("experiment", None)
        return config_to_toml(config_from_dict(runs.get(name).config_cls, cfg))
    except (OSError, KeyError, ValueError, TypeError):
        return None


def _recorded_claims(run_dir: Path) -> list[dict[str, Any]]:
    """The claims in the run's ``record.json`` (empty if none or unreadable)."""
    try:
        return list(json.loads((run_dir / "record.json").read_text()).get("claims") or [])
    except (OSError, ValueError):
        return []


def _claims_table(claims: list[dict[str, Any]]) -> list[str]:
    """Markdown table of an experiment's claims as the figure's run measured them."""
    if not claims:
        return []
    rows = ["| claim | measured | expected | verdict |", "|---|---|---|---|"]
    for c in claims:
        m = c.get("measured")
        m = f"{m:.4g}" if isinstance(m, float) else ("-" if m is None else str(m))
        # the console's and docs/claims.md's words: held, sanity ok (a sanity check, not
        # counted as a claim), NOT HELD (disputed / quick size), FAILED
        said = mark(c)
        said = said if said.startswith(("held", "sanity")) else f"**{said}**"
        rows.append(f"| {md_cell(c['name'])} | {m} | {c['expected']} | {said} |")
    return rows + [""]


def _load_manifest() -> dict[str, Any]:
    if MANIFEST.exists():
        return json.loads(MANIFEST.read_text())
    return {}


def write_page(manifest: dict[str, Any]) -> None:
    """Write ``docs/gallery.md`` from the registry and the images in ``docs/gallery``."""
    from specdyn import runs
    from specdyn.runs.config import config_to_toml

    lines = [
        "# Gallery",
        "",
        "Every experiment registered with `specdyn reproduce`, at its quick (laptop-sized)",
        "default, with the command that made the figure. Each run also writes the figure as",
        "PDF, its data as tidy Parquet rows and a `record.json` with the exact config, the",
        "specdyn version, the git commit, the host and the wall time; `--full` runs the",
        "paper-sized version and `--print-config` shows the config used. Under each figure,",
        "the claims the experiment checked on its own output in that run, held or not.",
        "",
        "Click a figure for full size. The images are regenerated by",
        "`python scripts/update_gallery.py` (downscaled copies of the PNGs the experiments",
        "write).",
        "",
    ]
    for name in runs.builtin_names():
        exp = runs.get(name)
        entry = manifest.get(name, {})
        images = [img for img in entry.get("images", []) if (GALLERY / img).exists()]
        lines += [f"## `{name}`", "", f"{exp.description}.", "", "```bash",
                  f"specdyn reproduce {name}", "```", ""]
        for img in images:
            # the image links to itself: multi-panel figures are easier to read full size
            lines += [f"[![{name}: {exp.description}](gallery/{img})](gallery/{img})", ""]
        if not images:
            lines += ["*No figure in the gallery yet: run "
                      f"`python scripts/update_gallery.py {name}`.*", ""]
        lines += _claims_table(entry.get("claims") or [])
        wall = entry.get("wall_s")
        if images and wall is not None:
            lines += [f"<small>Quick run: {wall:.0f} s on the documentation machine "
                      f"(specdyn {entry.get('version', '?')}).</small>", ""]
        # the config recorded when the figure was made; the current default otherwise
        toml = (entry.get("config_toml") or config_to_toml(exp.config())).rstrip()
        lines += [f'??? note "Config used (`specdyn reproduce {name} --print-config`)"', "",
                  "    ```toml"] + [f"    {ln}" if ln else "" for ln in toml.splitlines()] + [
                  "    ```", ""]
    PAGE.write_text("\n".join(lines).rstrip() + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="experiments (default: all registered)")
    ap.add_argument("--from-dir", type=Path, default=None,
                    help="take figures from an existing `specdyn reproduce --out` folder")
    ap.add_argument("--out", type=Path, default=None,
                    help="where to run the experiments (default: a temporary folder)")
    ap.add_argument("--page-only", action="store_true", help="only rewrite docs/gallery.md")
    ap.add_argument("--stale", action="store_true",
                    help="only experiments without a figure or changed since it was made")
    ap.add_argument("--max-kb", type=int, default=300, help="size limit of each PNG (kB)")
    ap.add_argument("--max-width", type=int, default=1200, help="width limit (pixels)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per-experiment limit (s)")
    args = ap.parse_args(argv)

    from specdyn import __version__, runs

    manifest = _load_manifest()
    failed: list[str] = []
    if not args.page_only:
        names = args.names or runs.builtin_names()
        for name in names:
            runs.get(name)  # a bad name fails before any work
        if args.stale:
            names = [n for n in names if _is_stale(n, manifest)]
            print(f"[gallery] stale: {', '.join(names) or 'none'}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            out = args.from_dir or args.out or Path(tmp)
            for name in names:
                if args.from_dir is None:
                    print(f"[gallery] {name}: running ...", flush=True)
                    res = _run_one(name, out, args.timeout)
                else:
                    res = {"ok": (out / name).is_dir(), "wall_s": None, "log": ""}
                    rec = out / name / "record.json"
                    if rec.exists():
                        res["wall_s"] = json.loads(rec.read_text()).get("wall_time_s")
                if not res["ok"]:
                    failed.append(name)
                    print(f"[gallery] {name}: FAILED\n{res['log']}", flush=True)
                    continue
                images = _collect(name, out / name, args.max_kb, args.max_width)
                manifest[name] = {"images": images, "wall_s": res["wall_s"],
                                  "version": __version__,
                                  "command": f"specdyn reproduce {name}",
                                  "config_toml": _recorded_config(name, out / name),
                                  "claims": _recorded_claims(out / name)}
                sizes = ", ".join(f"{i} {(GALLERY / i).stat().st_size // 1024} kB"
                                  for i in images)
                print(f"[gallery] {name}: {res['wall_s']} s -> {sizes or 'no PNG'}", flush=True)
                MANIFEST.parent.mkdir(parents=True, exist_ok=True)
                MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    write_page(manifest)
    print(f"[gallery] wrote {PAGE.relative_to(ROOT)}"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
