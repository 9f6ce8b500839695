import unittest

import support  # noqa: F401

from toolcell_tool import docstrings


class DocstringTest(unittest.TestCase):
    def test_description_stops_at_the_first_section(self):
        description, names = docstrings.parse(
            """Count the words in a text.

            Use it when asked how long a text is.

            Args:
                text: The text
                    to measure.
                unit (str): What to count.

            Returns:
                The count.
            """
        )
        self.assertEqual(description, "Count the words in a text.\n\nUse it when asked how long a text is.")
        self.assertEqual(names, {"text": "The text to measure.", "unit": "What to count."})

    def test_wrapped_lines_join_and_lists_keep_their_breaks(self):
        description, _ = docstrings.parse("One line\nwrapped here.\n\n- a item\n- b item\n")
        self.assertEqual(description, "One line wrapped here.\n\n- a item\n- b item")

    def test_other_section_names_and_attributes(self):
        _, names = docstrings.parse("Doc.\n\nAttributes:\n    top: How many.\n    order: Which way.\n")
        self.assertEqual(names, {"top": "How many.", "order": "Which way."})
        _, names = docstrings.parse("Doc.\n\nParameters:\n    x: An x.\n")
        self.assertEqual(names, {"x": "An x."})

    def test_no_docstring(self):
        self.assertEqual(docstrings.parse(None), ("", {}))
        self.assertEqual(docstrings.parse("Args:\n    x: y"), ("", {"x": "y"}))


if __name__ == "__main__":
    unittest.main()
