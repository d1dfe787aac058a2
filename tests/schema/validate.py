#!/usr/bin/python3
"""Validate JSON files against a JSON Schema (2020-12).

usage: validate.py SCHEMA FILE [FILE...]      (FILE "-" reads stdin)

Prints one line per violation ("file: /json/path: message") and exits 1 if
any file fails, 2 on a usage error or an invalid schema.  Needs the
jsonschema module (Debian: python3-jsonschema); run with /usr/bin/python3.
"""
import json
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("validate.py: the jsonschema module is missing "
                     "(apt-get install python3-jsonschema)\n")
    sys.exit(2)


def pointer(path):
    return "/" + "/".join(str(p) for p in path) if path else "/"


def reject_duplicates(pairs):
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            raise ValueError("duplicate key %r" % k)
    return dict(pairs)


def load(name):
    if name == "-":
        return json.load(sys.stdin, object_pairs_hook=reject_duplicates)
    with open(name, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=reject_duplicates)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    try:
        schema = load(argv[1])
        Draft202012Validator.check_schema(schema)
    except Exception as e:  # noqa: BLE001 - report and stop
        sys.stderr.write("%s: invalid schema: %s\n" % (argv[1], e))
        return 2
    validator = Draft202012Validator(schema)
    failed = 0
    for name in argv[2:]:
        try:
            doc = load(name)
        except (OSError, ValueError) as e:
            print("%s: cannot read: %s" % (name, e))
            failed += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            print("%s: %s: %s" % (name, pointer(e.absolute_path), e.message[:200]))
        if errors:
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
