"""Validation of a results document (``results.json``) against its JSON Schema
(``latscope.report.results.SCHEMA_FILE``), for every test that makes one."""

import json
from functools import cache

import jsonschema

from latscope.report.results import SCHEMA_FILE


@cache
def validator():
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(document):
    """Every way ``document`` breaks the schema, one line each (empty: valid)."""
    return [
        f"{error.json_path}: {error.message}"
        for error in validator().iter_errors(json.loads(json.dumps(document)))
    ]
