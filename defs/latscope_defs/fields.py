"""Bit-field layouts as plain descriptions: the one definition of each record value, lead byte,
command argument and reply of ``latscope_defs.protocol``.

A :class:`Fields` lists its fields least significant first (name -> width in bits, another
:class:`Fields`, or an :class:`Array` of them). The host reads and packs fields with it
directly, without importing Amaranth (whose import costs a command like ``latscope analyze``
more than reading a capture of millions of events); the gateware gets the same layout as an
``amaranth.lib.data.Struct`` (:meth:`Fields.struct`), built from this description the first
time it is asked for and the same class ever after.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Union

if TYPE_CHECKING:
    from amaranth.lib import data

__all__ = ["Array", "Field", "Fields"]


class Field(NamedTuple):
    """Where a field sits in its layout: bit offset and width (as Amaranth's ``data.Field``)."""

    offset: int
    width: int


@dataclass(frozen=True)
class Array:
    """``count`` elements of ``width`` bits each (``amaranth.lib.data.ArrayLayout``)."""

    width: int
    count: int

    @property
    def size(self) -> int:
        return self.width * self.count


Member = Union[int, "Fields", Array]


class Fields:
    """A layout: ``members`` (name -> int width, :class:`Fields` or :class:`Array`, least
    significant first), with the name and docstring its Amaranth struct gets."""

    size: int  #: bits

    def __init__(self, name: str, members: dict[str, Member], doc: str | None = None) -> None:
        self.name = name
        self.members = dict(members)
        self.doc = doc
        self._fields: dict[str, Field] = {}
        offset = 0
        for member, shape in self.members.items():
            width = shape if isinstance(shape, int) else shape.size
            self._fields[member] = Field(offset, width)
            offset += width
        self.size = offset
        self._struct: type[data.Struct] | None = None

    def __repr__(self) -> str:
        return f"Fields({self.name!r})"

    def __getitem__(self, name: str) -> Field:
        return self._fields[name]

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __iter__(self) -> Iterator[tuple[str, Field]]:
        return iter(self._fields.items())

    def mask(self, name: str) -> int:
        return (1 << self._fields[name].width) - 1

    def get(self, name: str, value: Any) -> Any:
        """Field ``name`` of ``value`` (an int or a numpy array of them)."""
        field = self._fields[name]
        return (value >> field.offset) & ((1 << field.width) - 1)

    def pack(self, **values: int) -> int:
        """The int of these field values, the others 0; each value is cut to its field's
        width, as ``Struct.const(...)`` does."""
        packed = 0
        for name, value in values.items():
            field = self._fields[name]
            packed |= (int(value) & ((1 << field.width) - 1)) << field.offset
        return packed

    def struct(self) -> "type[data.Struct]":
        """This layout as an ``amaranth.lib.data.Struct`` subclass (built once, then cached)."""
        if self._struct is None:
            from amaranth.lib import data

            def shape(member: Member) -> Any:
                if isinstance(member, Fields):
                    return member.struct()
                if isinstance(member, Array):
                    return data.ArrayLayout(member.width, member.count)
                return member

            namespace = {
                "__module__": "latscope_defs.protocol",
                "__qualname__": self.name,
                "__doc__": self.doc,
                "__annotations__": {name: shape(m) for name, m in self.members.items()},
            }
            self._struct = type(self.name, (data.Struct,), namespace)
        return self._struct
