"""Loss models of a link direction (``path.loss``, ``path.reverse.loss``): a probability, or a
table naming the model (docs/scenario-format.md, "Loss"), to the engine's loss config (§3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import units
from ..errors import nearest
from ..units import UnitError
from .defaults import LOSS_MODELS
from .fields import MISSING, Ctx, Invalid, Table, join

LOSS_ALLOWED = (
    "a probability like '0.5%' or 0.005 (Bernoulli), or a table {model = 'none'}, "
    "{model = 'bernoulli', p = ...} or {model = 'gilbert-elliott', p_gb = ..., p_bg = ..., "
    "loss_good = 0, loss_bad = 1} or {model = 'list', packets = [indices]}"
)


def parse_loss(ctx: Ctx, path: str, v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        try:
            p = units.parse_probability(v)
        except UnitError as e:
            raise ctx.error(path, e.problem, v, LOSS_ALLOWED) from None
        return {"model": "none"} if p == 0 else {"model": "bernoulli", "p": p}
    model = v.get("model", MISSING)
    if model is MISSING:
        raise ctx.error(join(path, "model"), "missing (required)", allowed=LOSS_ALLOWED)
    # The design's JSON spelling is gilbert_elliott; accept it too.
    if model == "gilbert_elliott":
        model = "gilbert-elliott"
    if not isinstance(model, str) or model not in LOSS_MODELS:
        near = nearest(model, LOSS_MODELS) if isinstance(model, str) else None
        hint = f" (did you mean '{near}'?)" if near else ""
        raise ctx.error(
            join(path, "model"),
            f"unknown loss model{hint}",
            model,
            "one of " + ", ".join(repr(m) for m in LOSS_MODELS),
        )
    keys = {
        "none": ("model",),
        "bernoulli": ("model", "p"),
        "gilbert-elliott": ("model", "p_gb", "p_bg", "loss_good", "loss_bad"),
        "list": ("model", "packets"),
    }[model]
    t = Table(ctx, v, path, keys, f"a {model} loss model")

    def prob(val: Any) -> float:
        return units.parse_probability(val)

    if model == "none":
        return {"model": "none"}
    if model == "bernoulli":
        return {"model": "bernoulli", "p": t.take("p", prob, required=True, allowed=LOSS_ALLOWED)}
    if model == "list":

        def indices(val: Any) -> list[int]:
            allowed = "an array of packet indices (integers ≥ 0, 0 = the first packet offered)"
            if not isinstance(val, list) or any(
                isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in val
            ):
                raise Invalid("is not a list of packet indices", allowed)
            return sorted(set(val))

        return {"model": "list", "packets": t.take("packets", indices, required=True)}
    return {
        "model": "gilbert_elliott",
        "p_gb": t.take("p_gb", prob, required=True, allowed="a probability (good → bad)"),
        "p_bg": t.take("p_bg", prob, required=True, allowed="a probability (bad → good)"),
        "loss_good": t.take("loss_good", prob, default=0.0),
        "loss_bad": t.take("loss_bad", prob, default=1.0),
    }


def show_loss(loss: Mapping[str, Any]) -> str:
    """A loss config (as :func:`parse_loss` returns it) in words, for the topology text."""
    if loss["model"] == "none":
        return "none"
    if loss["model"] == "bernoulli":
        return f"bernoulli p={loss['p']:g}"
    if loss["model"] == "list":
        n = len(loss["packets"])
        return f"list of {n} packet index{'es' if n != 1 else ''}"
    return (
        f"gilbert-elliott p_gb={loss['p_gb']:g} p_bg={loss['p_bg']:g} "
        f"loss_good={loss['loss_good']:g} loss_bad={loss['loss_bad']:g}"
    )
