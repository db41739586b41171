#!/usr/bin/env python3
"""train_peer.py prints JSON lines whatever the GPU machine's Python lacks (ctest bench.gpu_peer_*).

Each case runs the peer in a fresh interpreter with some modules made unimportable (None in sys.modules, as an
absent package behaves), on a few generated JPEGs, CPU, tiny preset, and checks every stdout line is JSON with
the fields the GPU check reads. The PIL-only transform is also compared with torchvision's where it exists.
  /usr/bin/python3 bench/gpu/train_peer_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = os.path.join(HERE, "train_peer.py")


def make_data(root, n=6):
    from PIL import Image, ImageDraw
    os.makedirs(os.path.join(root, "img"), exist_ok=True)
    with open(os.path.join(root, "captions.jsonl"), "w") as f:
        for i in range(n):
            im = Image.new("RGB", (90 + 7 * i, 70), (250, 250, 245))
            ImageDraw.Draw(im).ellipse((10, 10, 50 + i, 60), outline=(i * 30, 20, 10), width=3)
            im.save(os.path.join(root, "img", f"{i}.jpg"), quality=90)
            f.write(json.dumps({"image": f"img/{i}.jpg", "caption": f"a drawing number {i}"}) + "\n")


def run_peer(blocked, args):
    """Runs train_peer.py's main with `blocked` modules unimportable; -> (exit status, [parsed stdout lines])."""
    boot = ("import runpy, sys\n"
            f"for m in {list(blocked)!r}: sys.modules[m] = None\n"
            f"sys.path.insert(0, {HERE!r})\n"
            f"sys.argv = [{PEER!r}] + {list(args)!r}\n"
            f"runpy.run_path({PEER!r}, run_name='__main__')\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", boot], capture_output=True, text=True, timeout=120, env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    try:
        return p.returncode, [json.loads(ln) for ln in lines], p.stderr
    except json.JSONDecodeError as e:
        raise AssertionError(f"non-JSON stdout line ({e}): {p.stdout!r}\nstderr: {p.stderr[-2000:]}")


class PeerWithoutModules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        make_data(cls.data)
        cls.args = ["--data", cls.data, "--device", "cpu", "--preset", "tiny", "--batch", "2", "--warmup", "0",
                    "--steps", "2", "--workers", "0", "2", "--budget_s", "100"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_loader_only(self, rc, rows, stderr):
        self.assertEqual(rc, 0, stderr[-2000:])
        model = [r for r in rows if r["loader"] == "model_build"]
        self.assertEqual(len(model), 1, rows)
        self.assertIn("transformers is not installed", model[0]["skipped"])
        timed = [r for r in rows if r["loader"] != "model_build"]
        self.assertEqual([r["workers"] for r in timed], [0, 2])
        for r in timed:
            self.assertIn("loader only", r["loader"])
            self.assertGreater(r["samples_per_s"], 0)
            self.assertNotIn("error", r)
        return timed

    def test_no_torchvision_no_numpy_no_transformers(self):
        out = os.path.join(self.tmp.name, "a.jsonl")
        rc, rows, err = run_peer(["torchvision", "numpy", "transformers"], self.args + ["--out", out])
        timed = self.check_loader_only(rc, rows, err)
        self.assertTrue(timed[0]["transforms_api"].startswith("PIL only"), timed[0])
        self.assertIsNone(timed[0]["torchvision"])
        with open(out) as f:  # --out holds the same lines
            self.assertEqual([json.loads(ln) for ln in f], rows)

    def test_tvio_decode_without_torchvision_falls_back_to_pil(self):
        rc, rows, err = run_peer(["torchvision", "transformers"], self.args + ["--decode", "tvio"])
        timed = self.check_loader_only(rc, rows, err)
        self.assertTrue(timed[0]["transforms_api"].startswith("PIL only"), timed[0])

    def test_no_torch_still_prints_one_error_line(self):
        out = os.path.join(self.tmp.name, "c.jsonl")
        rc, rows, _ = run_peer(["torch"], self.args + ["--out", out])
        self.assertEqual(rc, 1)
        self.assertEqual(len(rows), 1)
        self.assertIsNone(rows[0]["samples_per_s"])
        self.assertIn("cannot import torch", rows[0]["error"])
        with open(out) as f:
            self.assertEqual(json.loads(f.read()), rows[0])


class PilTransformMatchesTorchvision(unittest.TestCase):
    def test_same_tensor(self):
        try:
            import torchvision  # noqa: F401
        except ImportError:
            self.skipTest("torchvision not installed")
        sys.path.insert(0, HERE)
        import train_peer
        from PIL import Image, ImageDraw
        for w, h in [(97, 64), (64, 131), (80, 80)]:
            im = Image.new("RGB", (w, h), (200, 180, 10))
            ImageDraw.Draw(im).line((0, 0, w, h), fill=(0, 40, 250), width=5)
            ref, _ = train_peer.make_transform(48, "pil")
            got = train_peer.PilTransform(48)(im)
            want = ref(im)
            self.assertEqual(tuple(got.shape), (3, 48, 48))
            self.assertLess(float((got - want).abs().max()), 1e-5, (w, h))


if __name__ == "__main__":
    unittest.main(verbosity=2)
