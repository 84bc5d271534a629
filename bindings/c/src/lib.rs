//! The C ABI of claimdag (SPEC section 9).
