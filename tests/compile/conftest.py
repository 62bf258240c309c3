import pytest

import glasstorch


@pytest.fixture(autouse=True)
def _reset_compile_caches():
    """Each test starts and ends with empty compile caches (their guards hold the compiled
    modules), as torch's own compile tests do with torch._dynamo.reset()."""
    glasstorch._dynamo.reset()
    yield
    glasstorch._dynamo.reset()
