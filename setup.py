"""pip install of the Python module `bridgetune`, offline, from this tree:

    python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-build-isolation --no-index .

(Debian's own python3 refuses a system-wide pip install: PEP 668.) The module is built by CMake, the libtorch-free half
of the tree only (-DBT_WITH_TORCH=OFF, target bt_python; the same C++ as `make build` puts in build/python), in
build-pip/ (BT_PIP_BUILD_DIR to change it), then packaged with the .py files of src/python/bridgetune. Needs what
`make build` needs minus libtorch, GoogleTest and Google Benchmark (neither tests nor benchmarks are configured:
BT_BUILD_TESTS/BT_BUILD_BENCH off; scripts/install_deps.sh), plus setuptools and wheel (python3-setuptools,
python3-wheel); the module itself links no libtorch and works with whatever torch is installed.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
PIP_BUILD = os.path.join(ROOT, "build-pip")  # setuptools' own folders too: build/ is CMake's (make build)
os.makedirs(PIP_BUILD, exist_ok=True)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.environ.get("BT_PIP_BUILD_DIR", PIP_BUILD))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                               "-DBT_WITH_TORCH=OFF", "-DBT_CUDA=OFF", "-DBT_BUILD_TESTS=OFF", "-DBT_BUILD_BENCH=OFF",
                               f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "bt_python", "-j", str(os.cpu_count() or 2)])
        package = os.path.join(build, "python", "bridgetune")
        built = [f for f in os.listdir(package) if f.startswith("_native") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"{package}: expected one _native*.so after the CMake build, found {built}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(package, built[0]), dest)


setup(
    name="bridgetune",
    version="0.1.0",
    description="bridgetune's C++ media pipeline as a PyTorch DataLoader (BridgeTower image-caption data)",
    packages=["bridgetune"],
    package_dir={"bridgetune": "src/python/bridgetune"},
    ext_modules=[Extension("bridgetune._native", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(PIP_BUILD, "setuptools")}, "egg_info": {"egg_base": PIP_BUILD}},
    python_requires=">=3.9",
    zip_safe=False,
)
