"""The host's explanations, from the corpus shared with it and the JavaScript SDK
(schema/corpus/, see its README): every case through the explainer invoke_json uses."""

import json
import os
import unittest

from support import REPO

from toolcell_tool import formats, validate, violations

CORPUS = os.path.join(REPO, "schema", "corpus")


def load(name):
    """The JSON in corpus file `name`; fails the test when it is missing."""
    path = os.path.join(CORPUS, name)
    if not os.path.isfile(path):
        raise AssertionError(f"the shared corpus {path} is missing")
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def explained(corpus, case):
    """The violations the SDK gives for the case, as the corpus writes them."""
    schema = case["schema"]
    if isinstance(schema, str):
        schema = corpus["schemas"][schema]
    found = violations.explain(schema, validate.errors(schema, case["instance"]))
    return [{"pointer": pointer, "message": message} for pointer, message in found]


class CorpusTest(unittest.TestCase):
    def test_every_shared_case_is_explained_as_the_host_does(self):
        corpus = load("violations.json")
        self.assertTrue(corpus["cases"], "the shared corpus has no cases")
        failures = []
        for case in corpus["cases"]:
            try:
                found = explained(corpus, case)
            except Exception as err:  # noqa: BLE001 - a crash on one case is reported with the others
                failures.append(f"{case['name']!r}: raised {err!r}")
                continue
            if found != case["violations"]:
                failures.append(
                    f"{case['name']!r}:\n  expected {json.dumps(case['violations'], ensure_ascii=False)}"
                    f"\n  got      {json.dumps(found, ensure_ascii=False)}"
                )
        if failures:
            self.fail(f"{len(failures)} of {len(corpus['cases'])} cases differ from the host:\n" + "\n".join(failures))

    def test_the_format_words_are_the_hosts(self):
        table = [(entry["format"], entry["words"]) for entry in load("formats.json")]
        self.assertTrue(table, "formats.json is empty")
        self.assertEqual(list(formats.STANDARD), table)


if __name__ == "__main__":
    unittest.main()
