from scripts.pipeline.stages import transform


def test_converts_currency_and_normalises():
    r = {"amount": "10", "currency": "USD", "country": " us ", "email": " A@B.C "}
    (out,) = transform.run([r], {}, None)
    assert out["amount_eur"] == 9.2
    assert out["country"] == "US"
    assert out["email"] == "a@b.c"
