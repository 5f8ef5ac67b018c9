"""Build steps that install ``kbackend_hook.pth`` next to the packages.

All metadata is in pyproject.toml. A ``.pth`` file must sit directly in
site-packages, which the declarative configuration cannot express:

- regular installs (wheel, sdist): ``build_py`` copies it to the root of the
  build directory, so it lands in site-packages with the packages;
- editable installs (``pip install -e .``): ``editable_wheel`` adds it to the
  editable wheel next to setuptools' own path file.

The file's one line imports the small ``kbackend_hook`` module, which does nothing
unless ``KERAS_BACKEND=kbackend`` is set (see kbackend/__init__.py).
"""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "kbackend_hook.pth"
PTH_TEXT = (Path(__file__).parent / PTH).read_text()


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / PTH
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(PTH_TEXT)

    def get_outputs(self, *args, **kwargs):
        return [*super().get_outputs(*args, **kwargs), str(Path(self.build_lib) / PTH)]


class _StrategyWithPth:
    """Wraps setuptools' editable strategy to add our .pth to the editable wheel."""

    def __init__(self, strategy):
        self._strategy = strategy

    def __enter__(self):
        self._strategy.__enter__()
        return self

    def __exit__(self, *exc):
        return self._strategy.__exit__(*exc)

    def __call__(self, wheel, files, mapping):
        self._strategy(wheel, files, mapping)
        wheel.writestr(PTH, PTH_TEXT)


class EditableWheelWithPth(editable_wheel):
    def _select_strategy(self, *args, **kwargs):
        return _StrategyWithPth(super()._select_strategy(*args, **kwargs))


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
