"""The spec order: no answer contradicts the spec sheet's roofline."""
