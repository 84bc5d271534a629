//! The Python module claimdag._claimdag (SPEC section 10).
