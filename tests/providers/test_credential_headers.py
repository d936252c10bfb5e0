"""A credential sent as a custom header (Azure OpenAI's ``api-key``, a gateway's ``x-api-key``, ``helicone-auth``) is
no part of the vector space: rotating it keeps the index (it changed the fingerprint, so every chunk was embedded
again), and the fingerprint never holds it; a header that names the model or upstream still counts."""

from __future__ import annotations

import pytest
from openclaw_memory.providers.base import provider_key
from tests.helpers.vendor_server import VendorServer
from tests.providers.test_remote_providers import gemini_provider, openai_provider


@pytest.mark.parametrize("make", [openai_provider, gemini_provider])
@pytest.mark.parametrize("header", ["api-key", "X-Api-Key", "x-portkey-api-key", "Helicone-Auth", "Proxy-Authorization",
                                    "Ocp-Apim-Subscription-Key", "X-Auth-Token"])
def test_rotating_a_credential_header_keeps_the_index(  # type: ignore[no-untyped-def]
    vendor: VendorServer, make, header: str
) -> None:
    old = make(vendor, headers={header: "0123456789abcdef0123456789abcdef", "X-Team": "memory"}).fingerprint()
    new = make(vendor, headers={header: "fedcba9876543210fedcba9876543210", "X-Team": "memory"}).fingerprint()
    assert provider_key(old) == provider_key(new)
    assert "0123456789abcdef" not in repr(old)
    assert ["X-Team", "memory"] in old["headers"]


def test_a_header_choosing_the_upstream_still_counts(vendor: VendorServer) -> None:
    one = openai_provider(vendor, headers={"x-portkey-provider": "openai"}).fingerprint()
    other = openai_provider(vendor, headers={"x-portkey-provider": "azure-openai"}).fingerprint()
    assert provider_key(one) != provider_key(other)
