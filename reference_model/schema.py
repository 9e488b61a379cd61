"""Schema registry: which schema a producer or consumer may bring to a topic, and which version it gets.

Pulsar part: broker ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/schema/``:
``SchemaRegistryServiceImpl.java`` (``putSchemaIfAbsent``, ``getSchemaVersionBySchemaData``,
``checkCompatibilityWithLatest`` / ``checkCompatibilityWithAll``, ``checkConsumerCompatibility``,
``trimDeletedSchemaAndGetList``, ``deleteSchema``), ``AvroSchemaBasedCompatibilityCheck.java`` (strategy ->
Avro ``SchemaValidatorBuilder`` ``canReadStrategy`` / ``canBeReadStrategy`` / ``mutualReadStrategy``, ``validateLatest``
/ ``validateAll``), ``KeyValueSchemaCompatibilityCheck.java``, ``SchemaCompatibilityCheck.java`` (the ``DEFAULT`` checker),
``NeverSchemaValidator.java``, ``BookkeeperSchemaStorage.java`` (version numbers),
``validator/StructSchemaDataValidator.java``;
``service/AbstractTopic.java`` (``addSchema``: auto-update; ``checkSchemaCompatibleForConsumer``), ``service/ServerCnx.java``
(``tryAddSchema``: producers without a schema; ``handleSubscribe``: AUTO_CONSUME), ``persistent/PersistentTopic.java``
(``addSchemaIfIdleOrCheckCompatible``). Avro: ``org.apache.avro.SchemaCompatibility`` (what ``canRead`` runs) and the
Avro 1.11.1 specification, "Schema Resolution". Docs: ``docs/schema-understand.md``, ``docs/schema-overview.md``,
``docs/admin-api-schemas.md`` (apache/pulsar-site).
Rule ids: PLS-SCHEMA-001 .. PLS-SCHEMA-022, *planned*: they are registered in ``rules.py`` (with a detector, cases
and a live confirmation each) when this chapter is composed into ``Broker`` (issue 17, part 2); until then no
verdict carries them and ``tests/model/test_chapters_are_the_model.py`` lists the chapter's functions as not reached.

The chapter in four parts, read top to bottom:

1. Avro definitions as values (``parse_avro``): a record's named fields with types and optional defaults, the primitives,
   unions, arrays, maps, enums, fixed and nested / named records. A definition that is not a valid Avro schema raises
   ``SchemaDefinitionError`` naming what is wrong and where (PLS-SCHEMA-022).
2. Avro schema resolution (``can_read`` / ``why_unreadable``): may data written with ``writer`` be read with ``reader``?
   Promotions int->long/float/double, long->float/double, float->double, string<->bytes (PLS-SCHEMA-011); records match
   fields by name or reader alias, a reader-only field needs a default, writer-only fields are ignored, enums and fixed
   match on their unqualified names while record names are not compared (PLS-SCHEMA-012: what Avro Java's resolver does,
   not what the Avro spec says); a writer enum symbol the reader lacks is no error for the validator the broker
   runs, default or not (PLS-SCHEMA-013: again the resolver, not the spec); every branch of a writer union must be readable, and a reader union reads a writer
   when one of its branches can (PLS-SCHEMA-014). This is the Avro Java 1.11.4 resolution the broker runs
   (``ValidateMutualRead`` / ``ValidateCanRead`` -> ``ResolvingGrammarGenerator`` -> ``Resolver``), written out here.
3. Strategies (``check_compatibility``): may a new schema join the live versions? ALWAYS_COMPATIBLE always
   (PLS-SCHEMA-006); a schema of another type than any version it is checked against is refused (PLS-SCHEMA-008);
   non-transitive strategies look at the latest version, transitive ones at every live version (PLS-SCHEMA-004);
   BACKWARD* = the new schema reads the old, FORWARD* = the old reads the new, FULL* = both (PLS-SCHEMA-005);
   ALWAYS_INCOMPATIBLE refuses any change (PLS-SCHEMA-007); types without a checker of their own never evolve: only
   ALWAYS_INCOMPATIBLE refuses them (PLS-SCHEMA-009); KEY_VALUE checks key and value separately (PLS-SCHEMA-010).
4. The registry (``register``, ``producer_connects``, ``consumer_subscribes``, ``delete_schema``): versions start at 0
   and count up, delete markers included (PLS-SCHEMA-001, -021); an already-registered schema gets its version before
   any check (PLS-SCHEMA-002); the first schema is stored unchecked (PLS-SCHEMA-003); auto-update off refuses what is
   not registered (PLS-SCHEMA-015); a producer without a schema is refused only under schemaValidationEnforced
   (PLS-SCHEMA-016); consumers without a schema or with AUTO_CONSUME are not checked (PLS-SCHEMA-017); a consumer on an
   idle topic registers like a producer (PLS-SCHEMA-018); on a topic in use it is checked and never stored
   (PLS-SCHEMA-019, -020).

"Same schema" (PLS-SCHEMA-002), as ``getSchemaVersionBySchemaData`` decides: the same schema type and, for AVRO / JSON /
PROTOBUF, the two definitions parse to equal Avro schemas (Avro's ``Schema.equals``: whitespace, JSON key order, ``doc``
and aliases do not matter; field order, names, types, defaults and other attributes do); for every other type the
schema data bytes are equal (their SHA-256). Primitive schemas carry no data, so two STRING schemas are always the same.

Not modelled: PROTOBUF_NATIVE evolution (its checker reads protobuf descriptors; a non-trivial check raises
``SchemaNotModelledError``), JSON schemas stored in the pre-2.x Jackson ``JsonSchema`` format, Avro logical types
(resolution ignores them, as Avro's checker does), schema properties other than as bytes, concurrent registrations (PR
#18701 makes them serial), the strategy hierarchy topic > namespace > broker and ``UNDEFINED``, system topics (always
auto-update), replicator-specific auto-update (5.0 docs), the client side of AUTO_PRODUCE beyond "the producer brings
the topic's latest schema", the admin ``upload`` REST path (same ``putSchemaIfAbsent``, without the topic's
auto-update flag), and what a consumer does with a version when it decodes messages.
Choices: values are frozen; the registry is a tuple of entries and every operation returns a new one with a frozen
outcome: ``Registered`` / ``Refused`` (a refusal the broker predicts is a value carrying its rule id, error class and
message), ``Accepted`` for connections. Messages are the broker's text as of 3.3 / 4.0, except after "Error during schema
compatibility check with strategy X: <exception class>:", where Avro prints the two schemas and the model prints its
reasons. Avro definitions are taken as JSON text (so a bare primitive is ``'"int"'``) or as decoded JSON values.
Defaults are not checked against their field types because Pulsar parses with ``setValidateDefaults(false)``.
``can_read`` follows Avro Java's ``SchemaCompatibility`` where it is stricter or looser than the spec's wording: a reader
union reads a writer when ANY branch can (the spec resolves the first that matches), and a reader enum with a default
reads every writer symbol (Avro 1.10+; older Avro refused unknown symbols).

Releases (3.0 / 3.3 / 4.0 agree on everything above except): a consumer with a schema on a topic in use without a schema
was refused with "Topic does not have schema to check" before PR #22974 (2024; 3.3+, 3.0.x only if backported);
PR #23344 (2024) reworded the schemaValidationEnforced producer error (4.0; text not verified); AUTO_CONSUME consumers
skip the check and do not make a topic "in use" since PIP-236 (PR #17449).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field

# --------------------------------------------------------------------------- errors


class SchemaDefinitionError(ValueError):
    """An Avro definition is not a valid Avro schema; the message says what is wrong and where (PLS-SCHEMA-022)."""


class SchemaNotModelledError(NotImplementedError):
    """The decision depends on something this chapter does not model (see "Not modelled")."""


# --------------------------------------------------------------------------- 1. Avro definitions as values

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED = {
    "type", "name", "namespace", "fields", "items", "values", "symbols", "size", "default", "doc", "aliases", "order",
}


class _NoDefault:
    """The field has no ``default`` attribute (``"default": null`` is a default, of JSON null)."""

    _instance = None

    def __new__(cls):  # one shared sentinel, so equality and hashing are by identity
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()


def _freeze(value):
    """A JSON value as a hashable value (dict -> sorted tuple of pairs, list -> tuple)."""
    if isinstance(value, dict):
        return ("{}",) + tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("[]",) + tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Primitive:
    name: str  # one of PRIMITIVES
    props: tuple = ()  # attributes other than "type" (e.g. logicalType), frozen


@dataclass(frozen=True)
class Field:
    name: str
    type: "AvroType"
    default: object = NO_DEFAULT  # a frozen JSON value, or NO_DEFAULT
    aliases: tuple[str, ...] = field(default=(), compare=False)
    doc: str | None = field(default=None, compare=False)
    order: str = "ascending"
    props: tuple = ()

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True)
class Record:
    fullname: str
    fields: tuple[Field, ...]
    aliases: tuple[str, ...] = field(default=(), compare=False)  # full names
    doc: str | None = field(default=None, compare=False)
    props: tuple = ()
    # (no unqualified ``name``: the resolver the broker runs never compares record names, PLS-SCHEMA-012)

    def field_named(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@dataclass(frozen=True)
class Enum:
    fullname: str
    symbols: tuple[str, ...]
    # Avro's EnumSchema.equals compares name, symbols and props, not the enum default: live 4.0.8 and 4.2.4,
    # 27 Nov 2026, an enum gaining a default was the same schema, no new version (regression
    # pls-schema-001-wrong-value-b49ad0b43539). The default still matters when a reader resolves a writer.
    default: str | None = field(default=None, compare=False)
    aliases: tuple[str, ...] = field(default=(), compare=False)
    doc: str | None = field(default=None, compare=False)
    props: tuple = ()

    @property
    def name(self) -> str:
        return self.fullname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Fixed:
    fullname: str
    size: int
    aliases: tuple[str, ...] = field(default=(), compare=False)
    props: tuple = ()

    @property
    def name(self) -> str:
        return self.fullname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Array:
    items: "AvroType"
    props: tuple = ()


@dataclass(frozen=True)
class Map:
    values: "AvroType"
    props: tuple = ()


@dataclass(frozen=True)
class Union:
    branches: tuple["AvroType", ...]


@dataclass(frozen=True)
class Ref:
    """A use of a named type inside its own definition (a recursive type); resolved through the schema's names."""

    fullname: str


# an Avro type ("AvroType" in annotations) is one of: Primitive, Record, Enum, Fixed, Array, Map, Union, Ref
NAMED = (Record, Enum, Fixed)


def _kind(t) -> str:
    """Avro's ``Schema.Type`` of a value: the primitive's name, or record/enum/fixed/array/map/union."""
    if isinstance(t, Primitive):
        return t.name
    return {Record: "record", Enum: "enum", Fixed: "fixed", Array: "array", Map: "map", Union: "union"}[type(t)]


class _Parser:
    """Avro's ``Schema.Parser`` rules, one definition at a time; ``where`` is a JSON-pointer-ish path for messages."""

    def __init__(self) -> None:
        self.names: dict[str, object] = {}  # full name -> finished named type
        self.defining: set[str] = set()  # full names whose definition is still open (a use is recursion)

    def fail(self, where: str, what: str) -> SchemaDefinitionError:
        return SchemaDefinitionError(f"invalid Avro schema at {where or '/'}: {what}")

    def fullname(self, name, namespace: str | None, where: str) -> str:
        if not isinstance(name, str) or not name:
            raise self.fail(where, f"a name must be a non-empty string, got {name!r}")
        parts = name.split(".")
        for p in parts:
            if not _NAME_RE.match(p):
                raise self.fail(where, f"illegal name {name!r}: each part must match [A-Za-z_][A-Za-z0-9_]*")
        if len(parts) > 1 or not namespace:
            return name
        return f"{namespace}.{name}"

    def reference(self, name: str, namespace: str | None, where: str):
        if name in PRIMITIVES:
            return Primitive(name)
        candidates = [name] if "." in name else ([f"{namespace}.{name}"] if namespace else []) + [name]
        for full in candidates:
            if full in self.names:
                return self.names[full]
            if full in self.defining:
                return Ref(full)
        raise self.fail(where, f"undefined name {name!r} (not a primitive and not a named type defined earlier)")

    def define(self, full: str, where: str) -> None:
        if full in self.names or full in self.defining:
            raise self.fail(where, f"can't redefine {full!r}")

    @staticmethod
    def props(obj: dict) -> tuple:
        """Attributes Avro keeps as properties (everything not reserved), frozen; () when there are none."""
        extra = {k: v for k, v in obj.items() if k not in _RESERVED}
        return _freeze(extra) if extra else ()

    def aliases(self, obj: dict, namespace: str | None, where: str) -> tuple[str, ...]:
        raw = obj.get("aliases", [])
        if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
            raise self.fail(where, "'aliases' must be a list of names")
        return tuple(self.fullname(a, namespace, where) for a in raw)

    def parse(self, node, namespace: str | None, where: str):
        if isinstance(node, str):
            return self.reference(node, namespace, where)
        if isinstance(node, list):
            return self.union(node, namespace, where)
        if not isinstance(node, dict):
            raise self.fail(where, f"a schema is a JSON string, object or array, got {node!r}")
        if "type" not in node:
            raise self.fail(where, "object has no 'type'")
        t = node["type"]
        if isinstance(t, (dict, list)):
            return self.parse(t, namespace, where + "/type")
        if not isinstance(t, str):
            raise self.fail(where, f"'type' must be a string, object or array, got {t!r}")
        if t in PRIMITIVES:
            return Primitive(t, self.props(node))
        if t in ("record", "error"):
            return self.record(node, namespace, where)
        if t == "enum":
            return self.enum(node, namespace, where)
        if t == "fixed":
            return self.fixed(node, namespace, where)
        if t == "array":
            if "items" not in node:
                raise self.fail(where, "array has no 'items'")
            return Array(self.parse(node["items"], namespace, where + "/items"), self.props(node))
        if t == "map":
            if "values" not in node:
                raise self.fail(where, "map has no 'values'")
            return Map(self.parse(node["values"], namespace, where + "/values"), self.props(node))
        return self.reference(t, namespace, where + "/type")

    def union(self, branches: list, namespace: str | None, where: str) -> Union:
        out, seen = [], set()
        for i, b in enumerate(branches):
            t = self.parse(b, namespace, f"{where}/{i}")
            if isinstance(t, Union):
                raise self.fail(f"{where}/{i}", "a union may not immediately contain another union")
            key = t.fullname if isinstance(t, (*NAMED, Ref)) else _kind(t)
            if key in seen:
                raise self.fail(f"{where}/{i}", f"duplicate {key!r} in union")
            seen.add(key)
            out.append(t)
        return Union(tuple(out))

    def record(self, node: dict, namespace: str | None, where: str) -> Record:
        if "name" not in node:
            raise self.fail(where, "record has no 'name'")
        full = self.fullname(node["name"], node.get("namespace", namespace), where + "/name")
        self.define(full, where + "/name")
        inner_ns = full.rsplit(".", 1)[0] if "." in full else None
        fields_raw = node.get("fields")
        if not isinstance(fields_raw, list):
            raise self.fail(where, f"record {full!r} needs 'fields', a list")
        self.defining.add(full)
        fields, names = [], set()
        for i, f in enumerate(fields_raw):
            fw = f"{where}/fields/{i}"
            if not isinstance(f, dict):
                raise self.fail(fw, "a field is a JSON object")
            if "name" not in f or not isinstance(f["name"], str) or not _NAME_RE.match(f["name"]):
                raise self.fail(fw, f"field needs a 'name' matching [A-Za-z_][A-Za-z0-9_]*, got {f.get('name')!r}")
            if f["name"] in names:
                raise self.fail(fw, f"duplicate field {f['name']!r} in record {full!r}")
            names.add(f["name"])
            if "type" not in f:
                raise self.fail(fw, f"field {f['name']!r} has no 'type'")
            order = f.get("order", "ascending")
            if order not in ("ascending", "descending", "ignore"):
                raise self.fail(fw, f"field {f['name']!r}: order must be ascending, descending or ignore")
            aliases = f.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise self.fail(fw, "'aliases' must be a list of names")
            fields.append(Field(
                name=f["name"], type=self.parse(f["type"], inner_ns, fw + "/type"),
                # defaults are not checked against the type: Pulsar parses with setValidateDefaults(false)
                default=_freeze(f["default"]) if "default" in f else NO_DEFAULT,
                aliases=tuple(aliases), doc=f.get("doc"), order=order,
                props=self.props(f),
            ))
        self.defining.discard(full)
        rec = Record(full, tuple(fields), self.aliases(node, inner_ns, where), node.get("doc"), self.props(node))
        self.names[full] = rec
        return rec

    def enum(self, node: dict, namespace: str | None, where: str) -> Enum:
        if "name" not in node:
            raise self.fail(where, "enum has no 'name'")
        full = self.fullname(node["name"], node.get("namespace", namespace), where + "/name")
        self.define(full, where + "/name")
        symbols = node.get("symbols")
        if not isinstance(symbols, list):
            raise self.fail(where, f"enum {full!r} needs 'symbols', a list")
        for s in symbols:
            if not isinstance(s, str) or not _NAME_RE.match(s):
                raise self.fail(where + "/symbols", f"illegal enum symbol {s!r}")
        if len(set(symbols)) != len(symbols):
            raise self.fail(where + "/symbols", f"duplicate enum symbol in {full!r}")
        default = node.get("default")
        if default is not None and default not in symbols:
            raise self.fail(where + "/default", f"enum default {default!r} is not one of the symbols of {full!r}")
        ns = full.rsplit(".", 1)[0] if "." in full else None
        e = Enum(full, tuple(symbols), default, self.aliases(node, ns, where), node.get("doc"), self.props(node))
        self.names[full] = e
        return e

    def fixed(self, node: dict, namespace: str | None, where: str) -> Fixed:
        if "name" not in node:
            raise self.fail(where, "fixed has no 'name'")
        full = self.fullname(node["name"], node.get("namespace", namespace), where + "/name")
        self.define(full, where + "/name")
        size = node.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise self.fail(where, f"fixed {full!r} needs 'size', a non-negative integer, got {size!r}")
        ns = full.rsplit(".", 1)[0] if "." in full else None
        fx = Fixed(full, size, self.aliases(node, ns, where), self.props(node))
        self.names[full] = fx
        return fx


def parse_avro(definition: str | dict | list):
    """PLS-SCHEMA-022: an Avro definition (JSON text, or a decoded JSON value) as a frozen value.

    Raises ``SchemaDefinitionError`` when the text is not JSON or not a valid Avro schema."""
    if isinstance(definition, (bytes, bytearray)):
        definition = definition.decode("utf-8")
    if isinstance(definition, str):
        parsed, problem = _parse_avro_text(definition)
        if problem is not None:
            raise SchemaDefinitionError(problem) from None
        return parsed
    return _Parser().parse(definition, None, "")


@functools.lru_cache(maxsize=4096)
def _parse_avro_text(text: str):
    """(frozen schema, None) or (None, the SchemaDefinitionError's message) for an Avro definition's text.

    Cached: a run parses the same few definitions at every producer, consumer and send (the parse result is a
    frozen value, so sharing it is safe)."""
    try:
        definition = json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno} column {e.colno}"
        return None, f"invalid Avro schema: not JSON ({e.msg} at {where})"
    try:
        return _Parser().parse(definition, None, ""), None
    except SchemaDefinitionError as err:
        return None, str(err)


def _named_types(t, out: dict | None = None) -> dict:
    """Full name -> named type, for every named type defined inside ``t`` (to resolve ``Ref``)."""
    out = {} if out is None else out
    if isinstance(t, NAMED):
        if t.fullname in out:
            return out
        out[t.fullname] = t
        if isinstance(t, Record):
            for f in t.fields:
                _named_types(f.type, out)
    elif isinstance(t, Array):
        _named_types(t.items, out)
    elif isinstance(t, Map):
        _named_types(t.values, out)
    elif isinstance(t, Union):
        for b in t.branches:
            _named_types(b, out)
    return out


# --------------------------------------------------------------------------- 2. Avro schema resolution

# the writer types each reader type may be promoted from (PLS-SCHEMA-011)
PROMOTIONS = {"long": ("int",), "float": ("int", "long"), "double": ("int", "long", "float"),
              "bytes": ("string",), "string": ("bytes",)}


class _Resolver:
    """Avro Java's schema resolution as the broker runs it (Avro 1.11.4 ``Resolver``, reached through
    ``SchemaValidatorBuilder``'s ``ValidateMutualRead`` / ``ValidateCanRead``): the list of reasons, empty = readable."""

    def __init__(self, reader_names: dict, writer_names: dict) -> None:
        self.rn, self.wn = reader_names, writer_names
        self.memo: dict[tuple, tuple[str, ...] | None] = {}  # None = in progress

    def check(self, r, w, at: str) -> tuple[str, ...]:
        r = self.rn.get(r.fullname, r) if isinstance(r, Ref) else r
        w = self.wn.get(w.fullname, w) if isinstance(w, Ref) else w
        key = (r, w)
        if key in self.memo:
            # a pair met again while it is being checked: compatible unless proven otherwise (Avro's recursion rule)
            return self.memo[key] or ()
        self.memo[key] = None
        out = self._calculate(r, w, at)
        self.memo[key] = out
        return out

    def _names_match(self, r, w, at: str) -> tuple[str, ...]:
        # PLS-SCHEMA-012: unqualified names, or the writer's full name among the reader's aliases
        if r.name == w.name or w.fullname in r.aliases:
            return ()
        return (f"{at or '/'}: name mismatch: reader {r.fullname!r}, writer {w.fullname!r}",)

    def _calculate(self, r, w, at: str) -> tuple[str, ...]:
        rk, wk = _kind(r), _kind(w)
        if rk == wk:
            if isinstance(r, Primitive):
                return ()
            if isinstance(r, Array):
                return self.check(r.items, w.items, at + "/items")
            if isinstance(r, Map):
                return self.check(r.values, w.values, at + "/values")
            if isinstance(r, Fixed):
                out = self._names_match(r, w, at)
                if r.size != w.size:
                    out += (f"{at or '/'}: fixed size: reader {r.size}, writer {w.size}",)
                return out
            if isinstance(r, Enum):
                # PLS-SCHEMA-013: only the names. The Avro spec makes a writer symbol the reader lacks an error
                # unless the reader has a default, but the validator the broker runs never sees it: Avro 1.11.4
                # Resolver.EnumAdjust records a missing symbol in its adjustments (an error only when such a datum
                # is read), and Symbol.hasErrors, which ValidateMutualRead / ValidateCanRead ask, looks for
                # ErrorAction, unions and repeaters, not into EnumAdjustAction (javap). Found live: a JSON schema
                # whose enum dropped a symbol, without a default, was admitted under FULL (2026-11-27).
                return self._names_match(r, w, at)
            if isinstance(r, Record):
                # PLS-SCHEMA-012: record names are not compared. The Avro spec asks for "records with the same
                # (unqualified) name", but the resolver the broker runs does not (Avro 1.11.4, shipped by Pulsar 3.0.7,
                # 3.3.6 and 4.0.8: ValidateMutualRead -> ResolvingGrammarGenerator -> Resolver.resolve, whose RECORD
                # case goes to RecordAdjust.resolve, which never reads a name; FIXED and ENUM compare getName()).
                # Found live: User then Account with the same fields, both admitted under FULL.
                return self._fields(r, w, at)
            # both unions: every writer branch must be readable by the reader union (PLS-SCHEMA-014)
            out = ()
            for i, wb in enumerate(w.branches):
                if self.check(r, wb, f"{at}/{i}"):
                    out += (f"{at or '/'}: reader union lacks writer type {_kind(wb)!r} (branch {i})",)
            return out
        if isinstance(w, Union):  # a reader that can read every writer branch can read the union
            out = ()
            for i, wb in enumerate(w.branches):
                out += self.check(r, wb, f"{at}/{i}")
            return out
        if isinstance(r, Union):  # some reader branch must read the writer
            for rb in r.branches:
                if not self.check(rb, w, at):
                    return ()
            return (f"{at or '/'}: reader union lacks writer type {wk!r}",)
        if wk in PROMOTIONS.get(rk, ()):  # PLS-SCHEMA-011
            return ()
        return (f"{at or '/'}: reader type {rk!r} not compatible with writer type {wk!r}",)

    def _fields(self, r: Record, w: Record, at: str) -> tuple[str, ...]:
        out = ()
        for i, rf in enumerate(r.fields):
            fat = f"{at}/fields/{i}"
            matches = [wf for wf in (w.field_named(n) for n in (rf.name, *rf.aliases)) if wf is not None]
            if len(matches) > 1:  # Avro throws; Pulsar reports the schemas incompatible
                out += (f"{fat}: reader field {rf.name!r} matches several writer fields",)
            elif not matches:
                # PLS-SCHEMA-012: a reader-only field needs a default ("default": null counts)
                if not rf.has_default:
                    out += (f"{fat}: reader field {rf.name!r} is not in the writer and has no default",)
            else:
                out += self.check(rf.type, matches[0].type, fat + "/type")
        # writer fields the reader does not name are ignored
        return out


def why_unreadable(reader, writer) -> tuple[str, ...]:
    """Why data written with ``writer`` cannot be read with ``reader`` (both parsed, or definitions); () = readable."""
    reader = reader if not isinstance(reader, (str, dict, list, bytes)) else parse_avro(reader)
    writer = writer if not isinstance(writer, (str, dict, list, bytes)) else parse_avro(writer)
    return _Resolver(_named_types(reader), _named_types(writer)).check(reader, writer, "")


def can_read(reader, writer) -> bool:
    """PLS-SCHEMA-011..014: Avro schema resolution succeeds for every datum ``writer`` can produce."""
    return not why_unreadable(reader, writer)


# --------------------------------------------------------------------------- 3. strategies

ALWAYS_COMPATIBLE = "ALWAYS_COMPATIBLE"
ALWAYS_INCOMPATIBLE = "ALWAYS_INCOMPATIBLE"
BACKWARD, FORWARD, FULL = "BACKWARD", "FORWARD", "FULL"
BACKWARD_TRANSITIVE, FORWARD_TRANSITIVE, FULL_TRANSITIVE = "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE"
STRATEGIES = (ALWAYS_INCOMPATIBLE, ALWAYS_COMPATIBLE, BACKWARD, FORWARD, FULL,
              BACKWARD_TRANSITIVE, FORWARD_TRANSITIVE, FULL_TRANSITIVE)
TRANSITIVE = (BACKWARD_TRANSITIVE, FORWARD_TRANSITIVE, FULL_TRANSITIVE)

# schema types whose definition is an Avro schema (``isUsingAvroSchemaParser``)
AVRO_PARSED_TYPES = ("AVRO", "JSON", "PROTOBUF")
# types with a checker of their own in a default broker (``schemaRegistryCompatibilityCheckers`` + KEY_VALUE);
# PROTOBUF is not in the default list, so it falls to the DEFAULT checker (PLS-SCHEMA-009)
DEFAULT_CHECKERS = ("AVRO", "JSON", "PROTOBUF_NATIVE", "KEY_VALUE")

# client-visible error classes (``PulsarClientException`` subclasses / broker exception names)
INCOMPATIBLE_SCHEMA = "IncompatibleSchema"
INVALID_SCHEMA_DATA = "InvalidSchemaData"


@dataclass(frozen=True)
class Schema:
    """What a client sends (``SchemaInfo``): a type and its definition. KEY_VALUE carries ``key`` and ``value``."""

    type: str  # AVRO, JSON, PROTOBUF, PROTOBUF_NATIVE, STRING, INT32, ..., KEY_VALUE, AUTO_CONSUME
    definition: str = ""  # the schema data as text ("" for primitives)
    key: "Schema | None" = None
    value: "Schema | None" = None

    @staticmethod
    def avro(definition: str | dict, type: str = "AVRO") -> "Schema":
        """An AVRO (or JSON/PROTOBUF) schema from an Avro definition; dicts are serialised compactly."""
        text = definition if isinstance(definition, str) else json.dumps(definition, separators=(",", ":"))
        return Schema(type, text)

    @staticmethod
    def key_value(key: "Schema", value: "Schema") -> "Schema":
        return Schema("KEY_VALUE", "", key, value)

    def data(self) -> bytes:
        """The stored bytes: the definition; KEY_VALUE the two halves' data, each after its 4-byte big-endian length
        (``KeyValueSchemaInfo.encodeKeyValueSchemaInfo``). The halves' types are schema *properties*, not data, so
        two KEY_VALUE schemas whose halves differ only in primitive types have the same data, and the broker takes
        the second for the first (PLS-SCHEMA-002; found live on 4.0.8, 2026-11-26: KV(INT32, V1) after KV(STRING, V1)
        was given version 0)."""
        if self.type == "KEY_VALUE":
            key, value = self.key.data(), self.value.data()
            return len(key).to_bytes(4, "big") + key + len(value).to_bytes(4, "big") + value
        return self.definition.encode("utf-8")


@dataclass(frozen=True)
class Verdict:
    """The outcome of a compatibility check: ``ok``, or the refusal's rule id and the broker's message."""

    ok: bool
    rule: str = ""
    message: str = ""
    error: str = ""

    def __bool__(self) -> bool:
        return self.ok


COMPATIBLE = Verdict(True)


def _incompatible(rule: str, message: str) -> Verdict:
    return Verdict(False, rule, message, INCOMPATIBLE_SCHEMA)


def _avro_check(existing: tuple[Schema, ...], new: Schema, strategy: str) -> Verdict:
    """``AvroSchemaBasedCompatibilityCheck``: the strategy's Avro validator over ``existing`` (oldest first)."""
    if strategy == ALWAYS_COMPATIBLE:  # AlwaysSchemaValidator
        return COMPATIBLE
    try:
        old = [parse_avro(s.definition) for s in existing]
        to = parse_avro(new.definition)
    except SchemaDefinitionError as e:  # SchemaParseException -> IncompatibleSchemaException
        return _incompatible("PLS-SCHEMA-022", str(e))
    if strategy not in (BACKWARD, FORWARD, FULL, *TRANSITIVE):  # NeverSchemaValidator (ALWAYS_INCOMPATIBLE)
        return _incompatible("PLS-SCHEMA-007", f"Error during schema compatibility check with strategy {strategy}: "
                             "org.apache.avro.SchemaValidationException: Unable to read schema") if old else COMPATIBLE
    # validateLatest looks at the newest only; the broker's non-transitive path passes just the latest anyway
    against = old if strategy in TRANSITIVE else old[-1:]
    for i, o in reversed(list(enumerate(against))):  # Avro walks newest first
        reasons = ()
        if strategy in (BACKWARD, BACKWARD_TRANSITIVE, FULL, FULL_TRANSITIVE):  # the new schema reads the old data
            reasons += why_unreadable(to, o)
        if strategy in (FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE):  # the old schema reads the new data
            reasons += why_unreadable(o, to)
        if reasons:  # PLS-SCHEMA-004 when the refusal comes from looking past the latest version
            rule = "PLS-SCHEMA-004" if strategy in TRANSITIVE and i < len(against) - 1 else "PLS-SCHEMA-005"
            return _incompatible(rule, f"Error during schema compatibility check with strategy {strategy}: "
                                 f"org.apache.avro.SchemaValidationException: {'; '.join(reasons)}")
    return COMPATIBLE


def _type_check(existing: tuple[Schema, ...], new: Schema, strategy: str, checkers: tuple[str, ...]) -> Verdict:
    """``compatibilityChecks.getOrDefault(type, DEFAULT).checkCompatible(existing, new, strategy)``."""
    kind = new.type
    if kind in checkers and kind in ("AVRO", "JSON", "PROTOBUF"):
        return _avro_check(existing, new, strategy)
    if kind in checkers and kind == "KEY_VALUE":  # PLS-SCHEMA-010
        if strategy == ALWAYS_COMPATIBLE:
            return COMPATIBLE
        for e in existing:
            if e.type != "KEY_VALUE":
                return _incompatible("PLS-SCHEMA-010", "From schema is not a KEY_VALUE schema.")
            if (e.key.type, e.value.type) != (new.key.type, new.value.type):
                return _incompatible("PLS-SCHEMA-010", (
                    "Key schemas or Value schemas are different schema type, from key schema type is "
                    f"{e.key.type} and to key schema is {new.key.type}, from value schema is {e.value.type} "
                    f"and to value schema is {new.value.type}"))
        keys = _type_check(tuple(e.key for e in existing), new.key, strategy, checkers)
        if not keys:
            return keys
        return _type_check(tuple(e.value for e in existing), new.value, strategy, checkers)
    if kind in checkers and kind == "PROTOBUF_NATIVE":
        if strategy == ALWAYS_COMPATIBLE or not existing:
            return COMPATIBLE
        raise SchemaNotModelledError("PROTOBUF_NATIVE evolution is decided on protobuf descriptors, not modelled")
    # the DEFAULT checker: schema evolution is off, only ALWAYS_INCOMPATIBLE refuses (PLS-SCHEMA-009)
    if strategy == ALWAYS_INCOMPATIBLE:
        return _incompatible("PLS-SCHEMA-007", "Schema compatibility strategy is ALWAYS_INCOMPATIBLE")
    return COMPATIBLE


def _type_mismatch(existing: Schema, new: Schema) -> Verdict:
    return _incompatible("PLS-SCHEMA-008", f"Incompatible schema: exists schema type {existing.type}, "
                         f"new schema type {new.type}")


def _same_hash(a: Schema, b: Schema) -> bool:
    """``SchemaHash``: SHA-256 of the schema data, and the type."""
    return a.type == b.type and hashlib.sha256(a.data()).digest() == hashlib.sha256(b.data()).digest()


def check_with_latest(latest: Schema | None, new: Schema, strategy: str,
                      checkers: tuple[str, ...] = DEFAULT_CHECKERS) -> Verdict:
    """``checkCompatibilityWithLatest``: the type must not change, an identical schema passes, else the checker."""
    if strategy == ALWAYS_COMPATIBLE or latest is None:  # PLS-SCHEMA-006
        return COMPATIBLE
    if new.type != latest.type:  # PLS-SCHEMA-008
        return _type_mismatch(latest, new)
    if _same_hash(latest, new):
        return COMPATIBLE
    return _type_check((latest,), new, strategy, checkers)


def check_with_all(live: tuple[Schema, ...], new: Schema, strategy: str,
                   checkers: tuple[str, ...] = DEFAULT_CHECKERS) -> Verdict:
    """``checkCompatibilityWithAll``: every live version has the new type, then the checker over all of them."""
    if strategy == ALWAYS_COMPATIBLE:
        return COMPATIBLE
    for s in live:  # PLS-SCHEMA-008
        if s.type != new.type:
            return _type_mismatch(s, new)
    return _type_check(live, new, strategy, checkers)


def check_compatibility(live: tuple[Schema, ...], new: Schema, strategy: str,
                        checkers: tuple[str, ...] = DEFAULT_CHECKERS) -> Verdict:
    """PLS-SCHEMA-004: may ``new`` join the ``live`` versions (oldest first)? Transitive strategies check all of
    them, the others only the latest. An empty history accepts anything (PLS-SCHEMA-003)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if not live:
        return COMPATIBLE
    if strategy in TRANSITIVE:
        return check_with_all(live, new, strategy, checkers)
    return check_with_latest(live[-1], new, strategy, checkers)


# --------------------------------------------------------------------------- 4. the registry


@dataclass(frozen=True)
class StoredSchema:
    """One entry of a topic's schema ledger: a version, and a schema or a delete marker."""

    version: int
    schema: Schema | None  # None: a delete marker (type NONE, deleted=true)

    @property
    def deleted(self) -> bool:
        return self.schema is None


@dataclass(frozen=True)
class SchemaHistory:
    """A topic's schema entries in storage order (what ``getAllSchemas`` returns)."""

    entries: tuple[StoredSchema, ...] = ()

    def live(self) -> tuple[StoredSchema, ...]:
        """``trimDeletedSchemaAndGetList``: the entries after the last delete marker."""
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i].deleted:
                return self.entries[i + 1:]
        return self.entries

    def latest(self) -> Schema | None:
        """``getSchema(Latest)``: the newest entry's schema, None when there is none or it is a delete marker."""
        return self.entries[-1].schema if self.entries else None

    def next_version(self) -> int:
        """PLS-SCHEMA-001: 0 for the first entry, then the newest entry's version + 1."""
        return self.entries[-1].version + 1 if self.entries else 0

    def append(self, schema: Schema | None) -> "SchemaHistory":
        return SchemaHistory(self.entries + (StoredSchema(self.next_version(), schema),))


@dataclass(frozen=True)
class Registered:
    """The broker tags this producer's messages with ``version``; ``new`` when this call stored it. ``rule``
    is the rule that let the schema in (not part of equality: it explains, it is not an outcome)."""

    version: int
    new: bool
    rule: str = field(default="", compare=False)


@dataclass(frozen=True)
class Refused:
    """The broker refuses the schema: ``error`` is the client-visible class, ``message`` the broker's text."""

    rule: str
    error: str
    message: str


@dataclass(frozen=True)
class Accepted:
    """The connection goes ahead; ``version`` is the schema version it uses, None for "no schema" (empty version).
    ``rule``: the rule that let it in (not part of equality)."""

    version: int | None = None
    rule: str = field(default="", compare=False)


def same_schema(a: Schema, b: Schema) -> bool:
    """PLS-SCHEMA-002, ``getSchemaVersionBySchemaData``: the same type and, for AVRO/JSON/PROTOBUF, equal parsed Avro
    schemas; for other types, equal data bytes."""
    if a.type != b.type:
        return False
    if a.type in AVRO_PARSED_TYPES:
        return parse_avro(a.definition) == parse_avro(b.definition)
    return hashlib.sha256(a.data()).digest() == hashlib.sha256(b.data()).digest()


def find_version(history: SchemaHistory, schema: Schema) -> int | None:
    """PLS-SCHEMA-002: the version of the first live entry that is the same schema, or None."""
    for entry in history.live():
        if same_schema(entry.schema, schema):
            return entry.version
    return None


def _invalid_definition(schema: Schema) -> Refused | None:
    """PLS-SCHEMA-022, ``StructSchemaDataValidator``: AVRO/JSON/PROTOBUF data must parse as an Avro schema."""
    parts = (schema.key, schema.value) if schema.type == "KEY_VALUE" else (schema,)
    for part in parts:
        if part.type in AVRO_PARSED_TYPES:
            try:
                parse_avro(part.definition)
            except SchemaDefinitionError as e:
                return Refused("PLS-SCHEMA-022", INVALID_SCHEMA_DATA,
                               f"Invalid schema definition data for {part.type} schema: {e}")
    return None


def register(history: SchemaHistory, schema: Schema, strategy: str, allow_auto_update: bool = True,
             checkers: tuple[str, ...] = DEFAULT_CHECKERS) -> tuple[SchemaHistory, Registered | Refused]:
    """``AbstractTopic.addSchema`` -> ``putSchemaIfAbsent``: the version a producer (or a consumer on an idle topic)
    gets, or the refusal; the history gains an entry only when a new version is stored."""
    if allow_auto_update:
        # the data validator wraps putSchemaIfAbsent only, so it runs before the lookup (PLS-SCHEMA-022)
        refused = _invalid_definition(schema)
        if refused:
            return history, refused
    # PLS-SCHEMA-002: an already-registered schema gets its version, whatever the strategy or auto-update
    try:
        version = find_version(history, schema)
    except SchemaDefinitionError as e:  # auto-update off: Avro's parser fails inside the lookup
        return history, Refused("PLS-SCHEMA-022", INVALID_SCHEMA_DATA, str(e))
    if version is not None:
        return history, Registered(version, new=False, rule="PLS-SCHEMA-002")
    if not allow_auto_update:  # PLS-SCHEMA-015
        return history, Refused("PLS-SCHEMA-015", INCOMPATIBLE_SCHEMA,
                                "Schema not found and schema auto updating is disabled.")
    live = tuple(e.schema for e in history.live())
    verdict = check_compatibility(live, schema, strategy, checkers)  # PLS-SCHEMA-003/004 (empty: no check)
    if not verdict:
        return history, Refused(verdict.rule, verdict.error, verdict.message)
    history = history.append(schema)
    return history, Registered(history.entries[-1].version, new=True, rule=admission_rule(history, schema, strategy, checkers))


def admission_rule(history: SchemaHistory, schema: Schema, strategy: str, checkers: tuple[str, ...] = DEFAULT_CHECKERS) -> str:
    """Which rule let a new version in (``history`` already holds it as its newest entry): the first schema of a
    topic (PLS-SCHEMA-003), the first after a delete (PLS-SCHEMA-021), ALWAYS_COMPATIBLE (PLS-SCHEMA-006), a
    KEY_VALUE checked half by half (PLS-SCHEMA-010), a type without a checker of its own (PLS-SCHEMA-009), a
    transitive strategy's check of every live version (PLS-SCHEMA-004), else the strategy's Avro check
    (PLS-SCHEMA-005)."""
    live = history.live()
    if len(live) == 1:
        return "PLS-SCHEMA-021" if len(history.entries) > 1 else "PLS-SCHEMA-003"
    if strategy == ALWAYS_COMPATIBLE:
        return "PLS-SCHEMA-006"
    if schema.type == "KEY_VALUE" and "KEY_VALUE" in checkers:
        return "PLS-SCHEMA-010"
    if schema.type not in checkers or schema.type == "PROTOBUF":
        return "PLS-SCHEMA-009"
    return "PLS-SCHEMA-004" if strategy in TRANSITIVE else "PLS-SCHEMA-005"


def delete_schema(history: SchemaHistory, force: bool = False) -> SchemaHistory:
    """PLS-SCHEMA-021: a delete appends a marker (which takes a version number); a forced delete removes the
    storage, so numbering restarts at 0."""
    if force:
        return SchemaHistory()
    if not history.entries or history.entries[-1].deleted:
        return history  # nothing to delete (BookkeeperSchemaStorage skips a missing schema)
    return history.append(None)


def producer_connects(history: SchemaHistory, schema: Schema | None, strategy: str, allow_auto_update: bool = True,
                      validation_enforced: bool = False, checkers: tuple[str, ...] = DEFAULT_CHECKERS,
                      ) -> tuple[SchemaHistory, Accepted | Refused]:
    """``ServerCnx.tryAddSchema``. ``schema`` None is a producer without a schema: clients send none for BYTES
    (and NONE)."""
    if schema is None or schema.type in ("BYTES", "NONE"):
        # PLS-SCHEMA-016: refused only when the topic has a schema and validation is enforced
        if history.latest() is not None and validation_enforced:
            return history, Refused("PLS-SCHEMA-016", INCOMPATIBLE_SCHEMA,
                                    "Producers cannot connect or send message without a schema to topics with a schema")
        return history, Accepted(None, rule="PLS-SCHEMA-016")
    history, outcome = register(history, schema, strategy, allow_auto_update, checkers)
    if isinstance(outcome, Refused):
        return history, outcome
    return history, Accepted(outcome.version, rule=outcome.rule)


def auto_produce_schema(history: SchemaHistory) -> Schema | None:
    """AUTO_PRODUCE (client side): the producer brings the topic's latest schema, or none (BYTES) without one."""
    return history.latest()


@dataclass(frozen=True)
class TopicUse:
    """What makes a topic "in use" for a subscribing consumer (``addSchemaIfIdleOrCheckCompatible``)."""

    producers: int = 0
    consumers: int = 0  # connected consumers other than AUTO_CONSUME ones
    has_data: bool = False


def consumer_subscribes(history: SchemaHistory, schema: Schema | None, strategy: str, use: TopicUse = TopicUse(),
                        allow_auto_update: bool = True, checkers: tuple[str, ...] = DEFAULT_CHECKERS,
                        ) -> tuple[SchemaHistory, Accepted | Refused]:
    """``ServerCnx.handleSubscribe`` -> ``addSchemaIfIdleOrCheckCompatible`` -> ``checkConsumerCompatibility``."""
    # PLS-SCHEMA-017: no schema (BYTES) and AUTO_CONSUME subscribe without any check
    if schema is None or schema.type in ("BYTES", "NONE", "AUTO_CONSUME"):
        return history, Accepted(None, rule="PLS-SCHEMA-017")
    in_use = history.latest() is not None or use.producers > 0 or use.consumers > 0 or use.has_data
    if not in_use:  # PLS-SCHEMA-018: an idle topic takes the consumer's schema like a producer's
        history, outcome = register(history, schema, strategy, allow_auto_update, checkers)
        return history, outcome if isinstance(outcome, Refused) else Accepted(outcome.version, rule="PLS-SCHEMA-018")
    # PLS-SCHEMA-019: a topic in use is checked; the consumer's schema is never stored
    if strategy == ALWAYS_COMPATIBLE:
        return history, Accepted(None, rule="PLS-SCHEMA-019")
    if history.latest() is None:  # PLS-SCHEMA-020: NotExistSchemaException, reworded by the topic
        return history, Refused("PLS-SCHEMA-020", INCOMPATIBLE_SCHEMA,
                                "Failed to add schema to an active topic with empty(BYTES) schema: "
                                f"new schema type {schema.type}")
    if strategy in (BACKWARD, FORWARD, FORWARD_TRANSITIVE, FULL):
        # the consumer must be able to read the latest version (checked as BACKWARD, latest only)
        verdict = check_with_latest(history.latest(), schema, BACKWARD, checkers)
    else:  # BACKWARD_TRANSITIVE, FULL_TRANSITIVE, ALWAYS_INCOMPATIBLE: the strategy against every live version
        verdict = check_with_all(tuple(e.schema for e in history.live()), schema, strategy, checkers)
    if not verdict:
        rule = verdict.rule if verdict.rule in ("PLS-SCHEMA-008", "PLS-SCHEMA-022") else "PLS-SCHEMA-019"
        return history, Refused(rule, verdict.error, verdict.message)
    return history, Accepted(None, rule="PLS-SCHEMA-019")
