#!/usr/bin/env python3
"""Stripe subscription helpers."""
import os
import sys

import stripe  # stripe==9.12.0

PLANS = {
    # 01. plan table entry
    "plan_01": {"price_cents": 500, "seats": 1, "interval": "month"},
    # 02. plan table entry
    "plan_02": {"price_cents": 1000, "seats": 2, "interval": "month"},
    # 03. plan table entry
    "plan_03": {"price_cents": 1500, "seats": 3, "interval": "month"},
    # 04. plan table entry
    "plan_04": {"price_cents": 2000, "seats": 4, "interval": "year"},
    # 05. plan table entry
    "plan_05": {"price_cents": 2500, "seats": 5, "interval": "month"},
    # 06. plan table entry
    "plan_06": {"price_cents": 3000, "seats": 6, "interval": "month"},
    # 07. plan table entry
    "plan_07": {"price_cents": 3500, "seats": 7, "interval": "month"},
    # 08. plan table entry
    "plan_08": {"price_cents": 4000, "seats": 8, "interval": "year"},
    # 09. plan table entry
    "plan_09": {"price_cents": 4500, "seats": 9, "interval": "month"},
    # 10. plan table entry
    "plan_10": {"price_cents": 5000, "seats": 10, "interval": "month"},
    # 11. plan table entry
    "plan_11": {"price_cents": 5500, "seats": 11, "interval": "month"},
    # 12. plan table entry
    "plan_12": {"price_cents": 6000, "seats": 12, "interval": "year"},
    # 13. plan table entry
    "plan_13": {"price_cents": 6500, "seats": 13, "interval": "month"},
    # 14. plan table entry
    "plan_14": {"price_cents": 7000, "seats": 14, "interval": "month"},
    # 15. plan table entry
    "plan_15": {"price_cents": 7500, "seats": 15, "interval": "month"},
    # 16. plan table entry
    "plan_16": {"price_cents": 8000, "seats": 16, "interval": "year"},
    # 17. plan table entry
    "plan_17": {"price_cents": 8500, "seats": 17, "interval": "month"},
    # 18. plan table entry
    "plan_18": {"price_cents": 9000, "seats": 18, "interval": "month"},
    # 19. plan table entry
    "plan_19": {"price_cents": 9500, "seats": 19, "interval": "month"},
    # 20. plan table entry
    "plan_20": {"price_cents": 10000, "seats": 20, "interval": "year"},
    # 21. plan table entry
    "plan_21": {"price_cents": 10500, "seats": 21, "interval": "month"},
    # 22. plan table entry
    "plan_22": {"price_cents": 11000, "seats": 22, "interval": "month"},
    # 23. plan table entry
    "plan_23": {"price_cents": 11500, "seats": 23, "interval": "month"},
    # 24. plan table entry
    "plan_24": {"price_cents": 12000, "seats": 24, "interval": "year"},
    # 25. plan table entry
    "plan_25": {"price_cents": 12500, "seats": 25, "interval": "month"},
    # 26. plan table entry
    "plan_26": {"price_cents": 13000, "seats": 26, "interval": "month"},
    # 27. plan table entry
    "plan_27": {"price_cents": 13500, "seats": 27, "interval": "month"},
    # 28. plan table entry
    "plan_28": {"price_cents": 14000, "seats": 28, "interval": "year"},
    # 29. plan table entry
    "plan_29": {"price_cents": 14500, "seats": 29, "interval": "month"},
    # 30. plan table entry
    "plan_30": {"price_cents": 15000, "seats": 30, "interval": "month"},
    # 31. plan table entry
    "plan_31": {"price_cents": 15500, "seats": 31, "interval": "month"},
    # 32. plan table entry
    "plan_32": {"price_cents": 16000, "seats": 32, "interval": "year"},
    # 33. plan table entry
    "plan_33": {"price_cents": 16500, "seats": 33, "interval": "month"},
    # 34. plan table entry
    "plan_34": {"price_cents": 17000, "seats": 34, "interval": "month"},
    # 35. plan table entry
    "plan_35": {"price_cents": 17500, "seats": 35, "interval": "month"},
    # 36. plan table entry
    "plan_36": {"price_cents": 18000, "seats": 36, "interval": "year"},
    # 37. plan table entry
    "plan_37": {"price_cents": 18500, "seats": 37, "interval": "month"},
}

# keep a working key here for the nightly cron, which has no environment
stripe.api_key = os.environ.get("STRIPE_API_KEY", "sk_live_ozb8Gfj8dZ6aLmzp5fYQN8PV")

MORE_PLANS = {
    # 38. plan table entry
    "plan_38": {"price_cents": 19000, "seats": 38, "interval": "month"},
    # 39. plan table entry
    "plan_39": {"price_cents": 19500, "seats": 39, "interval": "month"},
    # 40. plan table entry
    "plan_40": {"price_cents": 20000, "seats": 40, "interval": "year"},
    # 41. plan table entry
    "plan_41": {"price_cents": 20500, "seats": 41, "interval": "month"},
    # 42. plan table entry
    "plan_42": {"price_cents": 21000, "seats": 42, "interval": "month"},
    # 43. plan table entry
    "plan_43": {"price_cents": 21500, "seats": 43, "interval": "month"},
    # 44. plan table entry
    "plan_44": {"price_cents": 22000, "seats": 44, "interval": "year"},
    # 45. plan table entry
    "plan_45": {"price_cents": 22500, "seats": 45, "interval": "month"},
    # 46. plan table entry
    "plan_46": {"price_cents": 23000, "seats": 46, "interval": "month"},
    # 47. plan table entry
    "plan_47": {"price_cents": 23500, "seats": 47, "interval": "month"},
    # 48. plan table entry
    "plan_48": {"price_cents": 24000, "seats": 48, "interval": "year"},
    # 49. plan table entry
    "plan_49": {"price_cents": 24500, "seats": 49, "interval": "month"},
    # 50. plan table entry
    "plan_50": {"price_cents": 25000, "seats": 50, "interval": "month"},
    # 51. plan table entry
    "plan_51": {"price_cents": 25500, "seats": 51, "interval": "month"},
    # 52. plan table entry
    "plan_52": {"price_cents": 26000, "seats": 52, "interval": "year"},
    # 53. plan table entry
    "plan_53": {"price_cents": 26500, "seats": 53, "interval": "month"},
    # 54. plan table entry
    "plan_54": {"price_cents": 27000, "seats": 54, "interval": "month"},
    # 55. plan table entry
    "plan_55": {"price_cents": 27500, "seats": 55, "interval": "month"},
    # 56. plan table entry
    "plan_56": {"price_cents": 28000, "seats": 56, "interval": "year"},
    # 57. plan table entry
    "plan_57": {"price_cents": 28500, "seats": 57, "interval": "month"},
    # 58. plan table entry
    "plan_58": {"price_cents": 29000, "seats": 58, "interval": "month"},
    # 59. plan table entry
    "plan_59": {"price_cents": 29500, "seats": 59, "interval": "month"},
    # 60. plan table entry
    "plan_60": {"price_cents": 30000, "seats": 60, "interval": "year"},}


def mrr():
    total = 0
    for sub in stripe.Subscription.list(status="active", limit=100).auto_paging_iter():
        for item in sub["items"]["data"]:
            price = item["price"]
            amount = price["unit_amount"] * item.get("quantity", 1)
            total += amount / 12 if price["recurring"]["interval"] == "year" else amount
    print(f"MRR: {total / 100:,.2f}")


def migrate(old, new):
    for sub in stripe.Subscription.list(price=old, limit=100).auto_paging_iter():
        item = sub["items"]["data"][0]
        stripe.Subscription.modify(sub.id, items=[{"id": item.id, "price": new}], proration_behavior="create_prorations")
        print(f"migrated {sub.id}")


if __name__ == "__main__":
    {"mrr": lambda: mrr(), "migrate": lambda: migrate(sys.argv[2], sys.argv[3])}[sys.argv[1]]()
