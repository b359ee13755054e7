import tomllib

from tcplab.tomlw import dumps


def test_dumps_roundtrips_a_scenario_like_document():
    doc = {
        "name": "x",
        "description": 'quote " backslash \\ newline \n tab \t del \x7f é',
        "seed": 3,
        "ratio": 0.5,
        "big": 1e300,
        "flag": False,
        "path": {"rate": "1Gbit", "loss": {"model": "bernoulli", "p": 0.01}, "reverse": {}},
        "tcp": {"sack": True, "weird key": 1},
        "host": [{"name": "h", "side": "left"}],
        "flow": [
            {"name": "a", "cca": {"name": "cubic", "beta": 0.7}, "tcp": {"mss": 1448}},
            {"name": "b", "cca": "reno", "list": [1, 2, 3], "inline": [{"x": 1}, 2]},
        ],
    }
    text = dumps(doc, header_comment="line one\n\nline three")
    assert text.startswith("# line one\n#\n# line three\n")
    assert tomllib.loads(text) == doc
