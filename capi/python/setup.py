"""The wheel carries prebuilt binaries (tools/build_wheel.sh): a platform wheel for CPython's
stable ABI (cp39-abi3), not a pure-Python one."""
from setuptools import setup
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 (tools/build_wheel.sh installs a newer one)
    from wheel.bdist_wheel import bdist_wheel


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


class AbiThreeWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False
        self.py_limited_api = "cp39"

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "cp39", "abi3", platform


setup(distclass=BinaryDistribution, cmdclass={"bdist_wheel": AbiThreeWheel})
