"""The SDK's files: its copy of the WIT, the project template, the examples, build.py's errors."""

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from support import REPO, SDK

TEMPLATE = os.path.join(SDK, "template")
TEMPLATE_FILES = ["pyproject.toml", "{{module}}.py", "test_{{module}}.py", ".gitignore"]


def render(name, into):
    """The template filled in as `toolcell new NAME --lang python` fills it."""
    module = name.replace("-", "_")
    words = " ".join(word for word in name.replace("-", "_").split("_") if word)
    title = words[:1].upper() + words[1:]
    for relative in TEMPLATE_FILES:
        with open(os.path.join(TEMPLATE, relative), encoding="utf-8") as file:
            text = file.read()
        text = text.replace("{{name}}", name).replace("{{title}}", title)
        text = text.replace("{{module}}", module).replace("{{function}}", module)
        with open(os.path.join(into, relative.replace("{{module}}", module)), "w", encoding="utf-8") as file:
            file.write(text)


def run_build(project, env=None, out="out.wasm"):
    command = [sys.executable, os.path.join(SDK, "build.py"), project, "-o", os.path.join(project, out)]
    environment = dict(os.environ, **(env or {}))
    return subprocess.run(command, capture_output=True, text=True, env=environment)


class LayoutTest(unittest.TestCase):
    def test_the_wit_is_the_repositorys(self):
        self.assertTrue(
            filecmp.cmp(os.path.join(SDK, "wit", "tool.wit"), os.path.join(REPO, "wit", "tool.wit"), shallow=False),
            "sdk/python/wit/tool.wit differs from wit/tool.wit: copy it over",
        )

    def test_the_template_has_exactly_its_files(self):
        self.assertEqual(sorted(os.listdir(TEMPLATE)), sorted(TEMPLATE_FILES))

    def test_the_text_stats_example_is_the_rendered_template(self):
        with tempfile.TemporaryDirectory() as rendered:
            render("text_stats", rendered)
            example = os.path.join(SDK, "examples", "text_stats")
            for name in os.listdir(rendered):
                self.assertTrue(filecmp.cmp(os.path.join(rendered, name), os.path.join(example, name), shallow=False), name)

    def test_a_new_project_passes_its_own_tests(self):
        # A name with `-`: the module and function take `_`, the tool keeps the name.
        with tempfile.TemporaryDirectory() as project:
            render("word-count", project)
            done = subprocess.run(
                [sys.executable, "-m", "unittest"], cwd=project, capture_output=True, text=True,
                env=dict(os.environ, PYTHONPATH=SDK),
            )
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("Ran 3 tests", done.stderr)
            sys.path.insert(0, project)
            try:
                import word_count
            finally:
                sys.path.remove(project)
                sys.modules.pop("word_count", None)
            self.assertEqual(word_count.word_count.name, "word-count")
            self.assertEqual(word_count.word_count.metadata()["version"], "0.1.0")


class BuildErrorsTest(unittest.TestCase):
    """build.py's failures, which need no componentize-py run."""

    def setUp(self):
        self.project = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.project)
        self.fake = {"TOOLCELL_COMPONENTIZE_PY": shutil.which("true") or "/bin/true"}

    def test_componentize_py_missing(self):
        if os.path.exists(os.path.join(os.path.dirname(sys.executable), "componentize-py")):
            self.skipTest("this Python has componentize-py beside it")
        render("text_stats", self.project)
        env = {"PATH": "", "TOOLCELL_COMPONENTIZE_PY": ""}
        done = subprocess.run(
            [sys.executable, "-I", os.path.join(SDK, "build.py"), self.project, "-o", "x.wasm"],
            capture_output=True, text=True, env=env,
        )
        self.assertEqual(done.returncode, 2, done.stderr)
        requirements = os.path.join(SDK, "requirements-build.txt")
        self.assertIn(f"componentize-py is not installed: pip install -r {requirements}", done.stderr)

    def test_no_pyproject(self):
        done = run_build(self.project, self.fake)
        self.assertEqual(done.returncode, 1)
        self.assertIn("has no pyproject.toml", done.stderr)

    def test_usage_errors(self):
        done = run_build(os.path.join(self.project, "missing"), self.fake)
        self.assertEqual(done.returncode, 2)
        self.assertIn("is not a folder", done.stderr)
        done = subprocess.run([sys.executable, os.path.join(SDK, "build.py")], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)

    def test_two_tools(self):
        render("text_stats", self.project)
        with open(os.path.join(self.project, "text_stats.py"), "a", encoding="utf-8") as file:
            file.write('\n\n@tool\ndef second(x: int) -> int:\n    """Another."""\n    return x\n')
        done = run_build(self.project, self.fake)
        self.assertEqual(done.returncode, 1)
        self.assertIn("must define exactly one @tool function; found 2 (second, text_stats)", done.stderr)

    def test_a_wrong_module_name(self):
        render("text_stats", self.project)
        os.rename(os.path.join(self.project, "text_stats.py"), os.path.join(self.project, "other.py"))
        done = run_build(self.project, self.fake)
        self.assertEqual(done.returncode, 1)
        self.assertIn("the module `text_stats` named in pyproject.toml", done.stderr)

    def test_an_unsupported_hint_fails_the_build(self):
        render("text_stats", self.project)
        path = os.path.join(self.project, "text_stats.py")
        with open(path, encoding="utf-8") as file:
            text = file.read().replace("text: Annotated[str, Length(min=1, max=100_000)]", "text: bytes")
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
        done = run_build(self.project, self.fake)
        self.assertEqual(done.returncode, 1)
        self.assertIn("error: the tool function `text_stats`: parameter `text`: `bytes` is not supported", done.stderr)


if __name__ == "__main__":
    unittest.main()
