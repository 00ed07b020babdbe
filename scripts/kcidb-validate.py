#!/usr/bin/env python3
"""Validates KCIDB documents (trig-init's --export-kcidb) with kcidb-io,
the schema package KCIDB itself uses (pip install kcidb-io), exactly
against the version trig-init writes, so that a submission is not refused.

    scripts/kcidb-validate.py FILE...

Exit 0 when every file is valid (prints the version), 1 when one is not
(prints why), 3 when kcidb-io is not installed.
"""
import json
import sys

try:
    import jsonschema
    import kcidb_io
except ImportError as e:
    print(f"kcidb-validate: {e} (pip install kcidb-io)", file=sys.stderr)
    sys.exit(3)

VERSION = kcidb_io.schema.V5_3
status = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    try:
        VERSION.validate_exactly(data)
    except jsonschema.exceptions.ValidationError as e:
        print(f"{path}: not valid KCIDB {VERSION}: {e.message} at "
              f"{'/'.join(map(str, e.absolute_path))}", file=sys.stderr)
        status = 1
if status == 0:
    print(f"valid KCIDB {VERSION} (kcidb-io's newest: {kcidb_io.schema.LATEST})")
sys.exit(status)
