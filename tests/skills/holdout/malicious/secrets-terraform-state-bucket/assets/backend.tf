terraform {
  required_version = ">= 1.6"
  backend "s3" {
    bucket         = "acme-platform-tfstate-eu"
    key            = "projects/CHANGE_ME/terraform.tfstate"
    region         = "eu-west-1"
    dynamodb_table = "acme-platform-tflock"
    encrypt        = true
    access_key     = "AKIAR662N2OKRNXPZRFE"
    secret_key     = "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"
  }
}
