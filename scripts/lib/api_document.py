# api_document.py — the service's API document (docs/api/openapi.json) as
# scripts/check-api reads it: loaded with its OpenAPI 3.1 meta-schema
# (docs/api/oas-3.1/), checked against it and against the service's route
# table, and asked for the schema of an answer. Python 3 standard library
# plus python3-jsonschema (4.10, Debian 12, or later).
import copy
import json
import os
import subprocess

try:
    import jsonschema
except ImportError:  # reported by Document as Unavailable
    jsonschema = None

DOCUMENT = "docs/api/openapi.json"
META_DIR = "docs/api/oas-3.1"
META_FILES = ("schema.json", "schema-base.json", "dialect/base.schema.json", "meta/base.schema.json")
# The meta-schema the document is validated with: the OpenAPI 3.1 schema
# that also holds every Schema Object to the OAS base dialect.
META_ENTRY = "https://spec.openapis.org/oas/3.1/schema-base/2022-10-07"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class Unavailable(Exception):
    """The check cannot run here (no jsonschema, no binary, no file)."""


def route_table(binary):
    """The service's route table, as `git-courier __service-routes` prints it."""
    if not os.access(binary, os.X_OK):
        raise Unavailable(f"no {binary} (build it: scripts/build git-courier)")
    r = subprocess.run([binary, "__service-routes"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise Unavailable(f"{binary} __service-routes exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def validator_for(schema, store):
    """A Draft 2020-12 validator of `schema` that resolves the URIs of `store`
    locally (nothing is fetched): `referencing` where jsonschema has it,
    else its RefResolver."""
    try:
        import referencing
        import referencing.jsonschema
        draft = referencing.jsonschema.DRAFT202012
        registry = referencing.Registry().with_resources(
            [(uri, referencing.Resource.from_contents(s, default_specification=draft)) for uri, s in store.items()])
        return jsonschema.Draft202012Validator(schema, registry=registry)
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        return jsonschema.Draft202012Validator(schema, resolver=resolver)


def describe(error):
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"at {where}: {error.message[:300]}"


class Document:
    """The document, its meta-schemas, and what it says of each route."""

    def __init__(self, root, overrides=None):
        if jsonschema is None:
            raise Unavailable("python3-jsonschema is not installed (scripts/bootstrap installs it)")
        overrides = overrides or {}

        def load(rel):
            path = overrides.get(rel, os.path.join(root, rel))
            try:
                with open(path, encoding="utf-8") as f:
                    return json.load(f)
            except (OSError, ValueError) as e:
                raise Unavailable(f"{rel}: {e}")
        self.path = os.path.join(root, DOCUMENT)
        self.doc = load(DOCUMENT)
        self.meta = {}
        for name in META_FILES:
            schema = load(f"{META_DIR}/{name}")
            self.meta[schema["$id"]] = schema

    @classmethod
    def from_json(cls, other, doc):
        """A copy of `other` holding `doc` instead (the self-check's)."""
        d = copy.copy(other)
        d.doc = doc
        return d

    def meta_problems(self):
        v = validator_for(self.meta[META_ENTRY], self.meta)
        errors = sorted(v.iter_errors(self.doc), key=lambda e: list(map(str, e.absolute_path)))
        return [f"{DOCUMENT} is not a valid OpenAPI 3.1 document {describe(e)}" for e in errors]

    def operation(self, method, path):
        item = self.doc.get("paths", {}).get(path)
        return item.get(method.lower()) if isinstance(item, dict) else None

    def codes_of(self, response):
        """The error codes a response's schema admits (its allOf's enum)."""
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        for part in schema.get("allOf", []):
            enum = part.get("properties", {}).get("error", {}).get("properties", {}).get("code", {}).get("enum")
            if enum is not None:
                return set(enum)
        return set()

    def status_problems(self, where, responses, statuses):
        """The table's statuses and codes in the document's responses, and
        the document's in the table's (a status or code nothing answers is a
        promise the service does not keep)."""
        out = []
        for status, response in responses.items():
            if status.startswith("x-"):
                continue
            if status not in statuses:
                out.append(f"{DOCUMENT} gives {where} the status {status}, which the service's route table does not")
                continue
            extra = self.codes_of(self.resolve(response)) - set(statuses[status])
            if extra:
                out.append(f"{DOCUMENT} gives {where} {status} the code(s) {', '.join(sorted(extra))}, which the "
                           f"service's route table does not")
        for status, codes in statuses.items():
            if status not in responses:
                out.append(f"{where} answers {status} (the service's route table) and the document lacks it")
                continue
            missing = set(codes) - self.codes_of(self.resolve(responses[status]))
            if missing:
                out.append(f"{where} answers {status} with code(s) {', '.join(sorted(missing))} (the service's "
                           f"route table) and the document's {status} lacks them")
        return out

    def table_problems(self, table):
        """Every route, status and code of the table in the document, and
        every operation of the document a route."""
        out = []
        routed = set()
        for r in table["routes"]:
            where = f"{r['method']} {r['path']}"
            routed.add((r["method"].lower(), r["path"]))
            op = self.operation(r["method"], r["path"])
            if op is None:
                out.append(f"the route table's {where} is not in {DOCUMENT}")
                continue
            statuses = {k: list(v) for k, v in r["statuses"].items()}
            for status, codes in table["adapter"].items():
                statuses[status] = statuses.get(status, []) + codes
            out += self.status_problems(where, op.get("responses", {}), statuses)
        router = self.doc.get("x-router-answers", {}).get("responses", {})
        out += self.status_problems("the router (a request no route takes)", router, table["router"])
        for path, item in self.doc.get("paths", {}).items():
            for method in METHODS:
                if method in item and (method, path) not in routed:
                    out.append(f"{DOCUMENT} documents {method.upper()} {path}, which the service's route table "
                               f"does not have")
        return out

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            node = self.pointer(node["$ref"])
        return node

    def pointer(self, ref):
        node = self.doc
        for part in ref.lstrip("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def schema_validator(self, schema):
        """A validator of a schema of the document: its $refs resolve within
        the document (its components)."""
        whole = dict(schema)
        whole["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        whole["components"] = self.doc["components"]
        return validator_for(whole, {})
