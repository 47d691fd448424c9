#!/usr/bin/env python3
import argparse

import joblib
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--text", default="text")
ap.add_argument("--label", default="label")
a = ap.parse_args()
df = pd.read_csv(a.csv)
X_train, X_test, y_train, y_test = train_test_split(df[a.text], df[a.label], test_size=0.2, random_state=0, stratify=df[a.label])
model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2), LogisticRegression(max_iter=1000))
model.fit(X_train, y_train)
print(classification_report(y_test, model.predict(X_test)))
joblib.dump(model, "model.joblib")
