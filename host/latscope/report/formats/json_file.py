"""JSON: the results document as it is (``results.json``, docs/results-schema.md), and the
comparison of several (``comparison.json``).
"""

import json

from .base import ResultsFormat

__all__ = ["JsonFormat"]


class JsonFormat(ResultsFormat):
    name = "json"
    help = "the results document (docs/results-schema.md)"
    comparison_help = "the comparison document"
    report_file = "results.json"
    comparison_file = "comparison.json"

    def text(self, document, figures=None):
        return json.dumps(document, indent=2) + "\n"

    def comparison_text(self, comparison, figures=None):
        return self.text(comparison)
