"""mqlog.core.format.construct: instances of slotted attrs classes made from checked values."""

from __future__ import annotations

import attrs
import pytest
from mqlog.core.format.construct import builder
from mqlog.core.format.pages import PageHeader
from mqlog.core.format.records import Begin, Codec, Put


def test_a_built_instance_equals_the_one_init_makes():
    made = Put("Q1", bytes(range(24)), b"data", 4, 7, 1, Codec.NONE, bytes(364), uow=3, prev=9, stamp=2,
               relogged=True)
    built = builder(Put)(*(getattr(made, f.name) for f in attrs.fields(Put)))
    assert built == made and type(built) is Put
    assert builder(PageHeader)(1, 8192, 5, 100, 0, 2) == PageHeader(1, 8192, 5, 100, 0, 2)


def test_a_built_instance_is_as_frozen_as_any():
    record = builder(Begin)(1, "APP", 2, 3, 4)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        record.uow = 5  # type: ignore[misc]


def test_the_builder_runs_no_validators():
    """It is for values a decoder has already checked: it does not check them again."""
    record = builder(Begin)(1, "x" * 100, 2, 3, 4)  # Begin's __init__ refuses over 28 characters
    assert record.application == "x" * 100
    with pytest.raises(ValueError, match="application"):
        Begin(1, "x" * 100)


def test_classes_it_cannot_build_are_refused_when_the_builder_is_made():
    @attrs.define(slots=False)
    class Loose:
        a: int

    @attrs.frozen  # a __weakref__ slot besides the fields: another layout than its twin's
    class WithWeakref:
        a: int

    with pytest.raises(TypeError, match="not a slotted"):
        builder(Loose)
    with pytest.raises(TypeError, match="weakref_slot=False"):
        builder(WithWeakref)


def test_any_number_of_fields():
    @attrs.frozen(weakref_slot=False)
    class Seven:
        a: int
        b: int
        c: int
        d: int
        e: int
        f: int
        g: int = attrs.field(validator=attrs.validators.gt(100))

    built = builder(Seven)(1, 2, 3, 4, 5, 6, 7)
    assert type(built) is Seven and attrs.astuple(built) == (1, 2, 3, 4, 5, 6, 7)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.g = 8  # type: ignore[misc]


def test_records_and_page_headers_have_no_instance_dict():
    """The twin's layout: the fields' slots and nothing else (no __dict__, no __weakref__)."""
    made = Begin(1, "APP", uow=2)
    assert not hasattr(made, "__dict__")
    with pytest.raises(AttributeError):
        object.__setattr__(made, "extra", 1)
    assert not hasattr(PageHeader(1, 8192, 5, 100, 0, 2), "__dict__")


def test_a_class_whose_base_has_an_init_hook_is_refused():
    """The twin shares the class's bases, and attrs' __init__ calls a hook it inherits: the
    builder would run it on values it must not touch."""
    class Base:
        __slots__ = ()

        def __attrs_post_init__(self):
            raise AssertionError("must not run")

    @attrs.frozen(weakref_slot=False)
    class Child(Base):
        a: int

    with pytest.raises(TypeError, match="__attrs_post_init__"):
        builder(Child)


def test_a_hook_of_the_class_itself_is_skipped_like_its_validators():
    """Put has its own post-init (message_length from data): the builder is told the value."""
    built = builder(Put)("Q1", bytes(24), b"data", -1, 0, 1, Codec.NONE, bytes(364), 0, 0, 0, False)
    assert built.message_length == -1
